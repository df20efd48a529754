#!/bin/bash
# sampler.sh -- what `prof sample` costs its target, interleaved in one run:
# Debian's Redis (300 000 keys) under redis-benchmark's SET, GET and LPUSH
# (20 clients, 16 pipelined), its commands a second with no sampler and with
# each mode, in turn: the defaults (every call probed until the guard moves
# to bursts within 5% of what the target can spare), every call
# (--max-overhead 0), --alloc-only every call, and --slow-paths (bursts from
# the start).  Each mode's rate is against the mean of the unsampled
# periods just before and after it (the machine is shared: Redis's rate
# moves by a third between seconds with no sampler); medians of ROUNDS
# rounds.  The cost the sampler itself reports (share of Redis's CPU) is
# printed beside.
#   ROUNDS=5 SECS=8 bench/sampler.sh
set -u
cd "$(dirname "$0")/.."
source bench/lib.bash
JEMATTACH=$(readlink -f "${JEMATTACH:-build/jemattach}")
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-8}
[[ $(id -u) == 0 ]] || { echo "sampler.sh: needs root (uprobes)"; exit 1; }

bench_scratch
bench_redis_loaded
sleep 1

declare -A ARGS=([default]="" [every]="--max-overhead 0" [alloc]="--alloc-only --max-overhead 0"
		 [bursts]="--slow-paths")
MODES=(default every alloc bursts)

cmds() { redis-cli -p "$rport" info stats | sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p'; }

# rate SECONDS: Redis's commands a second over the next SECONDS.
rate() {
	local c0 c1 t0 t1
	c0=$(cmds); t0=$(date +%s%N); sleep "$1"; c1=$(cmds); t1=$(date +%s%N)
	echo $(((c1 - c0) * 1000000000 / (t1 - t0)))
}

# sampled MODE: Redis's rate while the sampler of MODE runs (2 s to place
# its probes and settle, then SECS), and the share of Redis's CPU it says it took.
sampled() {
	local spid r share
	"$JEMATTACH" "$rpid" prof sample 3600 ${ARGS[$1]} -o /dev/null >/dev/null 2>"$dir/err" &
	spid=$!
	sleep 2
	r=$(rate "$SECS")
	kill -INT "$spid"
	wait "$spid"
	share=$(sed -n 's/.*cost to the process: ~[0-9.]* s of its [0-9.]* s CPU (\([0-9.]*\)%).*/\1/p' "$dir/err")
	echo "$r ${share:-?}"
}

declare -A RATIO SHARE
prev=$(rate "$SECS")
for r in $(seq "$ROUNDS"); do
	for m in "${MODES[@]}"; do
		read -r during share <<<"$(sampled "$m")"
		next=$(rate "$SECS")
		ratio=$(awk -v d="$during" -v a="$prev" -v b="$next" 'BEGIN { printf "%.3f", d * 2 / (a + b) }')
		echo "round $r $m: $prev, $during with it ($share% of Redis's CPU by its count), $next req/s: $ratio" >&2
		RATIO[$m]+="$ratio "
		SHARE[$m]+="$share "
		prev=$next
	done
done

printf "%-8s %10s %10s %14s\n" mode "vs none" "range" "its cost %"
for m in "${MODES[@]}"; do
	printf "%-8s %10s %10s %14s\n" "$m" "$(tr ' ' '\n' <<<"${RATIO[$m]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${RATIO[$m]}" | grep . | sort -n | sed -n '1p;$p' | paste -sd-)" \
		"$(tr ' ' '\n' <<<"${SHARE[$m]}" | grep -v '?' | grep . | median)"
done
