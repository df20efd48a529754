#!/bin/bash
# census-chunks.sh -- what a census costs on jemalloc 3.6 and 4.5 (chunks and runs) against 5.3
# (extents), on the same program and heap: the census fixture holding about 0.5 and 2 GiB of
# 48-byte blocks (its "leak" chain) and 1 GiB of 1 KiB blocks, by size and (up to 1 GiB) with
# --leaks.
#
# Builds (those present): Debian's 5.3.0 (build/fixtures/censusfix), build/versions/4.5.0 and
# 3.6.0 (make versions JE_BUILD="4.5.0 3.6.0").  Only the fixtures started here are touched,
# and all are reaped.  N (default 3) runs per cell, interleaved across the builds; medians.
# Read the ratios (ms per GiB, stop against total), not the absolutes: the machine is shared.
set -u
cd "$(dirname "$0")/.."
N=${N:-3}
J=${JEMATTACH:-build/jemattach}
source bench/lib.bash
bench_scratch

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)," \
	"kernel $(uname -r); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "N=$N runs per cell, interleaved across builds; medians"

builds=()
for b in 5.3.0:build/fixtures/censusfix 4.5.0:build/versions/4.5.0/censusfix \
	 3.6.0:build/versions/3.6.0/censusfix; do
	[[ -x ${b#*:} ]] && builds+=("$b")
done
# Heaps: NAME:fixture commands (";"-separated).
heaps=("0.5GiB-48B:leak 11184810" "2GiB-48B:leak 44739242" "1GiB-1KiB:hold 1000000 1000")

# start BIN HEAP: a fixture holding HEAP; its pid in $fpid, its pipes in $fin/$fout.
start() {
	local d; d=$(mktemp -d "$dir/fix.XXXX")
	mkfifo "$d/in" "$d/out"
	"$1" <"$d/in" >"$d/out" &
	fpid=$!
	pids+=("$fpid")
	exec {fin}>"$d/in" {fout}<"$d/out"
	read -r _ <&"$fout"
	local c
	IFS=';' read -ra cs <<<"$2"
	for c in "threads 2" "${cs[@]}"; do
		echo "$c" >&"$fin"
		read -r _ <&"$fout"
	done
}

stop() {
	echo exit >&"$fin"
	wait "$fpid" 2>/dev/null
	exec {fin}>&- {fout}<&-
}

# run NAME KIND: one census of $fpid; appends "total_ms stop_ms meta_ms rss_kb gib" to $dir/NAME.KIND.
run() {
	local args=(census --json --no-stats)
	[[ $2 == leaks ]] && args+=(--leaks)
	/usr/bin/time -f '%M' -o "$dir/t" "$J" --timeout 600 "$fpid" "${args[@]}" >"$dir/out" 2>/dev/null ||
		{ echo "census-chunks.sh: census ($1 $2) failed" >&2; return; }
	jq -r --arg rss "$(cat "$dir/t")" \
		'"\(.total_ns / 1e6) \(.stop_ns / 1e6) \(.meta_ns / 1e6) \($rss) \(.bytes / 1073741824) \(.extents) \(.blocks)"' \
		"$dir/out" >>"$dir/$1.$2"
}

for h in "${heaps[@]}"; do
	for i in $(seq "$N"); do
		for b in "${builds[@]}"; do
			start "${b#*:}" "${h#*:}"
			run "${b%%:*}@${h%%:*}" size
			[[ ${h%%:*} == 2GiB* ]] || run "${b%%:*}@${h%%:*}" leaks
			stop
		done
	done
done

col() { awk -v k="$1" '{print $k}' "$2" | median; }
printf '%-20s %-6s %8s %8s %9s %9s %8s %8s %10s %9s\n' HEAP KIND BLOCKS EXTENTS TOTAL_MS STOP_MS META_MS \
	RSS_MIB MS_PER_GIB STOP/TOT
for h in "${heaps[@]}"; do
	for b in "${builds[@]}"; do
		name="${b%%:*}@${h%%:*}"
		for kind in size leaks; do
			f=$dir/$name.$kind
			[[ -s $f ]] || continue
			tot=$(col 1 "$f") stp=$(col 2 "$f") meta=$(col 3 "$f") rss=$(col 4 "$f") gib=$(col 5 "$f")
			printf '%-20s %-6s %8s %8s %9.1f %9.1f %8.1f %8.1f %10.1f %9.3f\n' "$name" "$kind" \
				"$(col 7 "$f")" "$(col 6 "$f")" "$tot" "$stp" "$meta" \
				"$(awk -v r="$rss" 'BEGIN {print r / 1024}')" \
				"$(awk -v t="$tot" -v g="$gib" 'BEGIN {print (g > 0 ? t / g : 0)}')" \
				"$(awk -v s="$stp" -v t="$tot" 'BEGIN {print (t > 0 ? s / t : 0)}')"
		done
	done
done
