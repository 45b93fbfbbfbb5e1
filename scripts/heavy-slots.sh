#!/bin/sh
# heavy-slots.sh LEDGER: what the whole-system tests of a `make unit` held
# (internal/testenv.Heavy writes one line per test to FSMNODES_HEAVY_LOG):
# the sum of slot-seconds against the slots' capacity, and the largest.
[ -s "$1" ] || exit 0
slots=${FSMNODES_TEST_HEAVY:-$(nproc)}
[ "$slots" -ge 2 ] 2>/dev/null || slots=2
awk -v slots="$slots" '{ s += $1; w += $3; n++ } END {
	printf "whole-system tests: %d held %.0f slot-seconds (%.1f min of %d slots), waited %.0f s in all\n", n, s, s / slots / 60, slots, w }' "$1"
echo "the largest (slot-s held-s waited-s slots package test):"
sort -rn "$1" | head -12
