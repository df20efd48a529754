#!/bin/bash
# emulate.sh -- `jemattach --emulate PID stats` (jemalloc run in unicorn on a
# copy of the process) against the in-target call, on Debian's redis-server,
# plus the same from a gcore of it.  Prints medians of N runs (default 15) and
# how many pages the emulation copied.
set -u
cd "$(dirname "$0")/.."
N=${N:-15}
J=${JEMATTACH:-build/jemattach}
source bench/lib.bash
bench_redis
gcore -o "$dir/core" "$pid" >/dev/null 2>&1

run() {	# LABEL CMD...: median wall time of CMD
	local label=$1; shift
	printf '  %-52s %8s ms\n' "$label" "$(for _ in $(seq "$N"); do wall_ms "$@"; done | median)"
}

echo "redis-server $(redis-server --version | awk '{print $3}'), 200000 keys, $N runs, medians (wall):"
run "jemattach PID get stats.allocated" "$J" "$pid" get stats.allocated
run "jemattach --emulate PID get stats.allocated" "$J" --emulate "$pid" get stats.allocated
run "jemattach PID stats" "$J" "$pid" stats
run "jemattach --emulate PID stats" "$J" --emulate "$pid" stats
run "jemattach core CORE stats" "$J" core "$dir/core.$pid" stats
echo "  pages copied by --emulate stats: $("$J" -v --emulate "$pid" stats 2>&1 >/dev/null |
	sed -n 's/.*emulation: \([0-9]*\) pages copied.*/\1/p')"
