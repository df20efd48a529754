#!/bin/bash
# get-vs-gdb.sh -- wall time of `jemattach PID get stats.allocated` against the gdb
# recipe it replaces, on Debian's redis-server, and how long jemattach holds the
# target thread.  Prints medians of N runs (default 15).
set -u
cd "$(dirname "$0")/.."
N=${N:-15}
J=${JEMATTACH:-build/jemattach}
dir=$(mktemp -d /tmp/jemattach-bench.XXXXXX)
port=$((20000 + RANDOM % 40000))
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
	--enable-debug-command local --logfile "$dir/log" --daemonize no &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] && break; sleep 0.05; done
redis-cli -p "$port" debug populate 200000 key 100 >/dev/null

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
wall_ms() {
	local t0 t1
	t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) / 1e6}'
}

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
