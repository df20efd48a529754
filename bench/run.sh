#!/bin/bash
# run.sh -- `make bench`: run every bench/*.sh but this one, in order; report failures.
set -u
cd "$(dirname "$0")/.."
rc=0
for b in bench/*.sh; do
	[[ $b == bench/run.sh ]] && continue
	echo "== $b"
	bash "$b" || { echo "FAILED $b"; rc=1; }
done
exit $rc
