#!/bin/sh
# heavy-slots.sh LEDGER: what the whole-system tests of a `make unit` held
# (internal/testenv.Heavy writes one line per test to FSMNODES_HEAVY_LOG:
# slot-seconds, held, waited, slots, the machine's slots, package, test):
# the sum of slot-seconds against the slots' capacity, and the largest.
[ -s "$1" ] || exit 0
awk '{ s += $1; w += $3; n++; slots = $5 } END {
	printf "whole-system tests: %d held %.0f slot-seconds (%.1f min of %d slots), waited %.0f s in all\n", n, s, s / slots / 60, slots, w }' "$1"
echo "the largest (slot-s held-s waited-s slots of package test):"
sort -rn "$1" | head -12
