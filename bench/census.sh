#!/bin/bash
# census.sh -- what a census costs as the heap grows: by size, --leaks and
# --by root on Redis holding about 1, 4 and 10 GiB (DEBUG POPULATE, 1 KiB
# values: four blocks a key); jemattach's peak memory per block and as a
# share of the heap, its time per GiB, how long the target's threads stay
# stopped.
#
# Only the Redis servers started here are touched, and all are reaped; one
# at a time (the machine is shared: a 10 GiB heap and what the census takes
# of it at once, no more), the largest last.  N (default 1) runs per cell,
# interleaved across kinds and binaries; medians.  SIZES (default "1 4 10")
# in GiB.  OLD=path: an older jemattach, run beside this one up to OLD_MAX
# GiB (default 4: at 10 GiB the old --by root alone wanted 4-5 GiB).  The
# machine and its load are printed first: read the ratios, not the absolutes.
set -u
cd "$(dirname "$0")/.."
N=${N:-1}
J=${JEMATTACH:-build/jemattach}
OLD=${OLD:-}
OLD_MAX=${OLD_MAX:-4}
SIZES=${SIZES:-1 4 10}
source bench/lib.bash
bench_scratch

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)," \
	"$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), kernel $(uname -r);" \
	"load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "N=$N runs per cell, interleaved across kinds${OLD:+ and binaries (old: $OLD, up to $OLD_MAX GiB)}; medians"

# redis_up GIB: a Redis holding about GIB GiB; sets $rpid.
redis_up() {
	local gib=$1 p keys
	for _ in 1 2 3; do
		p=$((20000 + RANDOM % 40000))
		redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
			--enable-debug-command local --dir "$dir" --logfile "$dir/redis-$gib.log" \
			--daemonize no --dbfilename "d$gib.rdb" &
		rpid=$!
		pids+=("$rpid")
		for _ in $(seq 400); do
			[[ $(redis-cli -p "$p" ping 2>/dev/null) == PONG ]] && break 2
			kill -0 "$rpid" 2>/dev/null || break
			sleep 0.05
		done
	done
	keys=$(awk -v g="$gib" 'BEGIN { printf "%d", g * 1073741824 / 1150 }')
	[[ $(redis-cli -p "$p" debug populate "$keys" key 1024) == OK ]] ||
		{ echo "census.sh: debug populate failed on redis $gib GiB" >&2; exit 1; }
}

redis_down() {
	kill "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
}

# run GIB KIND BIN: one census; appends "total_ms stop_ms rss_kb blocks bytes"
# to $dir/GIB.KIND.BIN.
run() {
	local gib=$1 kind=$2 bin=$3 args=(census --json --no-stats) exe=$J
	[[ $bin == old ]] && exe=$OLD
	case $kind in
	leaks) args+=(--leaks) ;;
	root) args+=(--by root) ;;
	esac
	/usr/bin/time -f '%M' -o "$dir/t" "$exe" --timeout 3600 "$rpid" "${args[@]}" >"$dir/out" 2>/dev/null ||
		{ echo "census.sh: $bin census $kind of redis $gib GiB failed" >&2; return; }
	jq -r --arg rss "$(tail -n 1 "$dir/t")" \
		'"\(.total_ns / 1e6) \(.stop_ns / 1e6) \($rss) \(.blocks) \(.bytes)"' "$dir/out" \
		>>"$dir/$gib.$kind.$bin"
}

for gib in $SIZES; do
	redis_up "$gib"
	bins=new
	[[ -n $OLD ]] && awk -v g="$gib" -v m="$OLD_MAX" 'BEGIN { exit !(g <= m) }' && bins="new old"
	for _ in $(seq "$N"); do
		for kind in size leaks root; do
			for bin in $bins; do
				run "$gib" "$kind" "$bin"
			done
		done
	done
	redis_down
done

col() { awk -v c="$1" '{print $c}' "$2" | median; }
printf '\n%-7s %-5s %-3s %10s %10s %9s %9s %9s %10s %10s %9s\n' "HEAP" "KIND" "BIN" "BLOCKS" \
	"TOTAL_S" "STOP_MS" "RSS_MIB" "B/BLOCK" "S_PER_GIB" "RSS/HEAP" "VS_OLD"
for gib in $SIZES; do
	for kind in size leaks root; do
		for bin in new old; do
			f=$dir/$gib.$kind.$bin
			[[ -s $f ]] || continue
			o=$dir/$gib.$kind.old
			awk -v g="$gib" -v k="$kind" -v bn="$bin" -v t="$(col 1 "$f")" -v s="$(col 2 "$f")" \
				-v r="$(col 3 "$f")" -v b="$(col 4 "$f")" -v l="$(col 5 "$f")" \
				-v ro="$([[ $bin == new && -s $o ]] && col 3 "$o" || echo 0)" 'BEGIN {
				printf "%-7s %-5s %-3s %10d %10.1f %9.1f %9.0f %9.1f %10.1f %10.3f %9s\n",
					g " GiB", k, bn, b, t / 1000, s, r / 1024, r * 1024 / b,
					t / 1000 / (l / 1073741824), r * 1024 / l,
					ro ? sprintf("%.2fx", r / ro) : "-" }'
		done
	done
done
echo
echo "B/BLOCK: jemattach's peak resident memory / live blocks (everything: its code, symbols and"
echo "fixed buffers too); RSS/HEAP: the same / live bytes; S_PER_GIB: the command's wall time per"
echo "GiB live; STOP_MS: every thread of the target stopped (the metadata read); VS_OLD: memory"
echo "against the old binary's, same cell."
