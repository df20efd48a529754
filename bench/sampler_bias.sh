#!/bin/bash
# sampler_bias.sh -- what each mode of `prof sample` gets right, against a
# truth: leakfix (2.5 MiB/s leaked in leak_site, as much allocated and freed
# in churn_site), ROUNDS windows of SECS per mode (the estimates and the
# hits); then Redis (300 000 keys, redis-benchmark's SET, GET and LPUSH, 20
# clients, 16 pipelined): `prof window 10` with each mode against a
# prof:true Redis's own window under the same load, the top sites' shares of
# what is in use after it.
#   ROUNDS=3 SECS=6 bench/sampler_bias.sh
set -u
cd "$(dirname "$0")/.."
source bench/lib.bash
JEMATTACH=$(readlink -f "${JEMATTACH:-build/jemattach}")
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-6}
[[ $(id -u) == 0 ]] || { echo "sampler_bias.sh: needs root (uprobes)"; exit 1; }
bench_scratch

LEAK_MODES=("defaults:" "every call:--max-overhead 0" "alloc-only:--alloc-only --max-overhead 0"
	    "bursts:--slow-paths --max-overhead 0" "bursts alloc-only:--slow-paths --alloc-only --max-overhead 0")
REDIS_MODES=("defaults:" "every call:--max-overhead 0" "1% budget:--max-overhead 1")

site() { jq -r --arg n "$2" '[.sites[] | select(.name == $n) | .flat] | (.[0] // 0) | floor' <<<"$1"; }
pct() { awk -v v="$1" -v t="$2" 'BEGIN { printf "%+.1f%%", (v - t) * 100 / t }'; }

mkfifo "$dir/in" "$dir/out"
build/fixtures/leakfix <"$dir/in" >"$dir/out" &
fpid=$!
pids+=("$fpid")
exec 3>"$dir/in" 4<"$dir/out"
read -r _ <&4
echo "leakfix: error against the truth (leak in use, churn in use in MB, leak and churn allocated), hits"
for r in $(seq "$ROUNDS"); do
	for m in "${LEAK_MODES[@]}"; do
		"$JEMATTACH" "$fpid" prof sample "$SECS" ${m#*:} -o "$dir/b.heap" >/dev/null 2>"$dir/b.err"
		secs=$(sed -n 's/^jemattach: \([0-9.]*\) s, [0-9]* probes.*/\1/p' "$dir/b.err")
		truth=$(awk -v s="$secs" 'BEGIN { printf "%d", s * 2621440 }')
		in=$("$JEMATTACH" analyze "$dir/b.heap" --format json --pid "$fpid" 2>/dev/null)
		al=$("$JEMATTACH" analyze "$dir/b.heap" --format json --alloc-space --pid "$fpid" 2>/dev/null)
		printf "%-18s round %d: leak %s, churn %.2f MB, allocated %s %s, %s hits\n" "${m%%:*}" "$r" \
			"$(pct "$(site "$in" leak_site)" "$truth")" "$(site "$in" churn_site)e-6" \
			"$(pct "$(site "$al" leak_site)" "$truth")" "$(pct "$(site "$al" churn_site)" "$truth")" \
			"$(sed -n 's/.* probes: \([0-9]*\) hits.*/\1/p' "$dir/b.err")"
	done
done

# unredis: the Redis and its load gone.
unredis() {
	local p keep=()
	for p in "${pids[@]}"; do
		[[ $p == "$fpid" ]] && { keep+=("$p"); continue; }
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pids=("${keep[@]}")
}

# shares PROFILE [ANALYZE OPTIONS]: the total in use and the top sites' shares.
shares() {
	"$JEMATTACH" analyze "$@" --format json --pid "$rpid" 2>/dev/null | jq -r '(.sites | map(.flat) | add) as $t
		| "\($t / 1048576 | floor) MiB: " + ([.sites | sort_by(-.flat)[:5][] | "\(.name) \(.flat * 100 / $t | floor)%"] | join(", "))'
}

echo "Redis: in use after prof window 10, the top sites' shares"
for r in $(seq "$ROUNDS"); do
	bench_redis_loaded MALLOC_CONF=prof:true,prof_active:false
	rm -rf "$dir/w"
	"$JEMATTACH" "$rpid" prof window 10 -o "$dir/w" >/dev/null 2>&1
	echo "prof:true round $r: $(shares "$dir/w/window.heap" --base "$dir/w/base.heap")"
	unredis
	for m in "${REDIS_MODES[@]}"; do
		bench_redis_loaded
		rm -rf "$dir/w"
		"$JEMATTACH" "$rpid" prof window 10 ${m#*:} -o "$dir/w" >/dev/null 2>"$dir/w.err"
		echo "${m%%:*} round $r: $(shares "$dir/w/window.heap") (the probes: $(sed -n \
			's/.* s of its [0-9.]* s CPU (\([0-9.]*%\)).*/\1/p' "$dir/w.err") of its CPU)"
		unredis
	done
done
