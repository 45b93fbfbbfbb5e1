#!/bin/sh
# Regenerates the message bindings and fails if the committed files under
# msgs/ differ from what the generator produces (CI drift check).
set -eu
cd "$(dirname "$0")/.."
go generate ./msgs/...
changes=$(git status --porcelain -- msgs)
if [ -n "$changes" ]; then
	echo "check-generate: generated bindings are out of date; run 'go generate ./msgs/...' and commit:" >&2
	echo "$changes" >&2
	exit 1
fi
echo "check-generate: msgs/ is up to date"
