#!/bin/bash
# get-vs-gdb.sh -- wall time of `jemattach PID get stats.allocated` against the gdb
# recipe it replaces, on Debian's redis-server, and how long jemattach holds the
# target thread.  Prints medians of N runs (default 15).
set -u
cd "$(dirname "$0")/.."
N=${N:-15}
J=${JEMATTACH:-build/jemattach}
source bench/lib.bash
bench_redis

for _ in $(seq "$N"); do wall_ms "$J" "$pid" get stats.allocated; done | median > "$dir/j"
for _ in $(seq "$N"); do "$J" -v "$pid" get stats.allocated 2>&1 | sed -n 's/.*held for \([0-9.]*\) ms/\1/p'; done | median > "$dir/h"
for _ in $(seq "$N"); do wall_ms "$J" "$pid" stats; done | median > "$dir/s"
for _ in $(seq "$N"); do "$J" -v "$pid" stats 2>&1 >/dev/null | sed -n 's/.*held for \([0-9.]*\) ms/\1/p'; done | median > "$dir/sh"
for _ in $(seq "$N"); do
	wall_ms gdb -p "$pid" -batch -nx -ex 'call (int)mallctl("prof.active",0,0,0,0)'
done | median > "$dir/g"
echo "redis-server $(redis-server --version | awk '{print $3}'), 200000 keys, $N runs, medians:"
printf '  %-58s %8s ms wall, thread held %s ms\n' "jemattach PID get stats.allocated" "$(cat "$dir/j")" "$(cat "$dir/h")"
printf '  %-58s %8s ms wall, thread held %s ms\n' "jemattach PID stats" "$(cat "$dir/s")" "$(cat "$dir/sh")"
printf '  %-58s %8s ms wall, every thread stopped throughout\n' \
	"gdb -p PID -batch -nx -ex 'call (int)mallctl(...)'" "$(cat "$dir/g")"
