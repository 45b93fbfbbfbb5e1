#!/usr/bin/env bash
# Runs every fuzz target in the repo for a short time (FUZZTIME, default 5s),
# so CI exercises the decoders and parsers beyond their seed corpora.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-5s}
n=0
while IFS=: read -r file name; do
  pkg=./$(dirname "$file")
  echo "== fuzz $pkg $name ($t)"
  go test -run='^$' -fuzz="^${name}\$" -fuzztime="$t" "$pkg"
  n=$((n+1))
done < <(git ls-files '*_test.go' | xargs -r grep -HoE '^func (Fuzz[A-Za-z0-9_]+)' | sed -E 's/func //')
echo "fuzz smoke: $n targets"
