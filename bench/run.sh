#!/bin/bash
# run.sh -- `make bench`: run every benchmark in bench/.
set -u
cd "$(dirname "$0")/.."
for b in bench/*.sh; do
	[[ $b == bench/run.sh ]] && continue
	echo "== $b"
	"$b"
done
