#!/bin/bash
# census.sh -- what a census costs: its time and peak memory, and how long the
# target's threads stay stopped (only the metadata read), on Redis holding
# about 0.1, 1 and 4 GiB (DEBUG POPULATE, 1 KiB values); by size, and with
# --leaks --by type (every block's contents read).
#
# Only the Redis servers started here are touched, and all are reaped.  N
# (default 3) runs per cell, interleaved across the sizes; medians.  SIZES
# (default "0.1 1 4") in GiB.  The machine and its load are printed first:
# read the ratios (per GiB, stop against total), not the absolutes.
set -u
cd "$(dirname "$0")/.."
N=${N:-3}
J=${JEMATTACH:-build/jemattach}
SIZES=${SIZES:-0.1 1 4}
source bench/lib.bash
bench_scratch

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)," \
	"kernel $(uname -r); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "N=$N runs per cell, interleaved across sizes; medians"

declare -A port rpid
for gib in $SIZES; do
	# A port taken meanwhile makes redis exit: another one; up to 20 s to
	# answer on a loaded machine.
	for _ in 1 2 3; do
		p=$((20000 + RANDOM % 40000))
		redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
			--enable-debug-command local --dir "$dir" --logfile "$dir/redis-$gib.log" \
			--daemonize no --dbfilename "d$gib.rdb" &
		rpid[$gib]=$!
		pids+=("$!")
		for _ in $(seq 400); do
			[[ $(redis-cli -p "$p" ping 2>/dev/null) == PONG ]] && break 2
			kill -0 "${rpid[$gib]}" 2>/dev/null || break
			sleep 0.05
		done
	done
	port[$gib]=$p
	keys=$(awk -v g="$gib" 'BEGIN { printf "%d", g * 1073741824 / 1150 }')
	[[ $(redis-cli -p "$p" debug populate "$keys" key 1024) == OK ]] ||
		{ echo "census.sh: debug populate failed on redis $gib GiB" >&2; exit 1; }
done

# run GIB KIND: one census; appends "total_ms stop_ms rss_kb blocks" to $dir/GIB.KIND.
run() {
	local gib=$1 kind=$2 args=(census --json --no-stats)
	[[ $kind == leaks ]] && args+=(--leaks --by type)
	/usr/bin/time -f '%M' -o "$dir/t" "$J" --timeout 600 "${rpid[$gib]}" "${args[@]}" >"$dir/out" 2>/dev/null ||
		{ echo "census.sh: census of redis $gib GiB failed" >&2; return; }
	jq -r --arg rss "$(cat "$dir/t")" \
		'"\(.total_ns / 1e6) \(.stop_ns / 1e6) \($rss) \(.blocks) \(.bytes)"' "$dir/out" >>"$dir/$gib.$kind"
}
for i in $(seq "$N"); do
	for gib in $SIZES; do
		run "$gib" size
		run "$gib" leaks
	done
done

col() { awk -v c="$1" '{print $c}' "$2" | median; }
printf '\n%-8s %-6s %10s %12s %10s %10s %10s %12s\n' "HEAP" "KIND" "BLOCKS" "LIVE_MIB" "TOTAL_MS" \
	"STOP_MS" "RSS_MIB" "MS_PER_GIB"
for gib in $SIZES; do
	for kind in size leaks; do
		f=$dir/$gib.$kind
		[[ -s $f ]] || continue
		total=$(col 1 "$f")
		live=$(col 5 "$f")
		awk -v g="$gib" -v k="$kind" -v b="$(col 4 "$f")" -v l="$live" -v t="$total" \
			-v s="$(col 2 "$f")" -v r="$(col 3 "$f")" 'BEGIN {
			printf "%-8s %-6s %10d %12.0f %10.1f %10.1f %10.1f %12.1f\n", g " GiB", k, b,
				l / 1048576, t, s, r / 1024, t / (l / 1073741824) }'
	done
done
echo
echo "STOP_MS: every thread of the target stopped (the metadata read); TOTAL_MS: the"
echo "command; RSS_MIB: jemattach's peak resident memory; MS_PER_GIB: total per GiB live."
