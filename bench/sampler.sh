#!/bin/bash
# sampler.sh -- what `prof sample` costs its target, interleaved in one run:
# Redis under redis-benchmark (requests a second) and leakfix's malloc/free
# loop (ns a pair), with no sampler, `prof sample` (in use: allocations,
# their returns and every free probed), --alloc-only, --alloc-only
# --slow-paths, in use with --slow-paths (allocations on the slow paths,
# every free), and bcc's memleak-bpfcc on jemalloc.  Each round runs every
# mode once, in turn; medians of ROUNDS rounds and their ratio to none.
#   ROUNDS=3 REQUESTS=20000 bench/sampler.sh
set -u
cd "$(dirname "$0")/.."
source bench/lib.bash
JEMATTACH=$(readlink -f "${JEMATTACH:-build/jemattach}")
ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-20000}
LIBJE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[[ $(id -u) == 0 ]] || { echo "sampler.sh: needs root (uprobes)"; exit 1; }

bench_redis
fixdir=$(mktemp -d /tmp/jemattach-bench.XXXXXX)
mkfifo "$fixdir/in" "$fixdir/out"
build/fixtures/leakfix <"$fixdir/in" >"$fixdir/out" &
fpid=$!
exec 3>"$fixdir/in" 4<"$fixdir/out"
read -r _ <&4	# ready
trap 'kill "$pid" "$fpid" 2>/dev/null; wait "$pid" "$fpid" 2>/dev/null; rm -rf "$dir" "$fixdir"' EXIT

# memleak-bpfcc compiles its program at start with the kernel's headers
# (BCC_KERNEL_SOURCE names a tree when /lib/modules has none).  On the VM
# this was written on (a custom 6.18 kernel: no headers, no kheaders) it
# cannot: with Debian's 6.1 headers it compiles, then bcc 0.26 asks the
# kernel for its uprobes with a ref_ctr_offset of 6 (perf_event_open
# config=0x600000000: EINVAL), and its tracefs fallback is refused too.
MODES=(none inuse inslow alloc slow memleak)
if ! why=$(timeout 60 memleak-bpfcc -p "$fpid" -O "$LIBJE" 1 1 2>&1); then
	echo "memleak-bpfcc cannot run here: $(grep -v '^ ' <<<"$why" | tail -1)" >&2
	MODES=(none inuse inslow alloc slow)
fi

# start MODE PID: the sampler of MODE on PID, in the background ($spid; "" for none).
start() {
	spid=""
	case $1 in
	none) return ;;
	inuse) "$JEMATTACH" "$2" prof sample 3600 --max-overhead 0 -o /dev/null >/dev/null 2>&1 & ;;
	inslow) "$JEMATTACH" "$2" prof sample 3600 --slow-paths --max-overhead 0 -o /dev/null >/dev/null 2>&1 & ;;
	alloc) "$JEMATTACH" "$2" prof sample 3600 --alloc-only --max-overhead 0 -o /dev/null >/dev/null 2>&1 & ;;
	slow) "$JEMATTACH" "$2" prof sample 3600 --alloc-only --slow-paths --max-overhead 0 \
		-o /dev/null >/dev/null 2>&1 & ;;
	memleak) memleak-bpfcc -p "$2" -O "$LIBJE" 3600 >/dev/null 2>&1 & ;;
	esac
	spid=$!
	# Until the probes are in: bcc compiles its program first.
	if [[ $1 == memleak ]]; then sleep 12; else sleep 2; fi
}

stop() {
	[[ -n $spid ]] || return 0
	kill -INT "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}

redis_rps() {
	redis-benchmark -p "$port" -t set,get -n "$REQUESTS" -q --csv 2>/dev/null |
		awk -F'"' '/"(SET|GET)"/ { s += $4; n++ } END { if (n) printf "%.0f\n", s / n }'
}

fix_ns() {
	echo "time 200000" >&3
	read -r _ ns <&4
	echo "$ns"
}

declare -A R F
for r in $(seq "$ROUNDS"); do
	for m in "${MODES[@]}"; do
		start "$m" "$pid"; rr=$(redis_rps); stop
		start "$m" "$fpid"; ff=$(fix_ns); stop
		R[$m]+="$rr "; F[$m]+="$ff "
		echo "round $r $m: redis $rr req/s, leakfix $ff ns a pair" >&2
	done
done

base_r=$(tr ' ' '\n' <<<"${R[none]}" | grep . | median)
base_f=$(tr ' ' '\n' <<<"${F[none]}" | grep . | median)
printf "%-8s %14s %10s %16s %10s\n" mode "redis req/s" "vs none" "malloc+free ns" "vs none"
for m in "${MODES[@]}"; do
	rr=$(tr ' ' '\n' <<<"${R[$m]}" | grep . | median)
	ff=$(tr ' ' '\n' <<<"${F[$m]}" | grep . | median)
	awk -v m="$m" -v r="$rr" -v br="$base_r" -v f="$ff" -v bf="$base_f" \
		'BEGIN { printf "%-8s %14.0f %10.3f %16.1f %10.1f\n", m, r, r / br, f, f / bf }'
done
