#!/bin/bash
# serve.sh -- what a /metrics scrape of `jemattach serve` costs for 1, 10 and 50
# targets, against running `jemattach PID get ...` once per target for the
# same figures: wall time, CPU time (server and its children, or the gets),
# and how long each target's thread was held.
#
# --min-interval 0: every scrape attaches to every target (the worst case; the
# default of 1 s makes scrapes within a second free; --max-duty 100: no budget
# between attaches).  Interleaved: in each of ROUNDS rounds, BATCH scrapes then
# BATCH loops of gets, per target count.  MAX_ATTACHES (default 4, serve's
# default) bounds the targets attached at once.
#
# Then heap answers (HEAP_MB, default 128; 0: skipped): a process whose dumps
# are HEAP_MB, and a fresh server asked for its heap profile by 1, then by
# HEAP_N (16) clients at once, HEAP_ROUNDS (3) times interleaved: the server's
# peak RSS and the wall time of the answers, and their ratios (one copy of the
# dump and one report, however many clients).
# Only processes started here are touched (our fixtures) and all are reaped.
set -u
cd "$(dirname "$0")/.."
J=$(readlink -f "${JEMATTACH:-build/jemattach}")
F=$(readlink -f "${FIXTURES:-build/fixtures}")
ROUNDS=${ROUNDS:-7}
BATCH=${BATCH:-10}
COUNTS=${COUNTS:-1 10 50}
. bench/lib.bash
bench_scratch

echo "machine: $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); rounds $ROUNDS x batch $BATCH"
max=0
for n in $COUNTS; do ((n > max)) && max=$n; done
fix=()
for i in $(seq "$max"); do
	mkfifo "$dir/in.$i"
	"$F/jemfix" <"$dir/in.$i" >/dev/null &
	pids+=($!)
	fix+=($!)
	exec {fd}>"$dir/in.$i"
done
sleep 1

# med: the median on stdin, as a plain number (lib.bash's prints 1e+06 forms).
med() { median | awk '{printf "%.3f\n", $1}'; }

# serving PID: until the server listens (0), or it exited (1: a port taken).
serving() {
	for _ in $(seq 400); do
		grep -q serving "$dir/serve.err" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# ticks of PID and its reaped children (utime stime cutime cstime).
ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
declare -A probe_s

printf '%-8s %12s %12s %12s %12s %12s %12s %8s\n' targets "scrape ms" "gets ms" "scrape cpu" \
	"gets cpu" "held ms" "get held" "wall x"
for n in $COUNTS; do
	sel=()
	for p in "${fix[@]:0:n}"; do sel+=(--target "pid=$p"); done
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		"$J" serve --listen "127.0.0.1:$port" --min-interval 0 --max-duty 100 --timeout 30 \
			--max-attaches "${MAX_ATTACHES:-4}" "${sel[@]}" 2>"$dir/serve.err" &
		sp=$!
		pids+=($sp)
		serving "$sp" && break
	done
	url="http://127.0.0.1:$port/metrics"
	# The first scan (before the server listens) probed each target once.
	probe_s[$n]=$(curl -s "http://127.0.0.1:$port/targets" | jq -r '"\(.scan_seconds) \(.scan_probes)"')
	curl -s "$url" >/dev/null
	: >"$dir/s.wall"; : >"$dir/g.wall"; : >"$dir/s.cpu"; : >"$dir/g.cpu"; : >"$dir/s.held"; : >"$dir/g.held"
	for _ in $(seq "$ROUNDS"); do
		c0=$(ticks "$sp"); t0=$(date +%s%N)
		for _ in $(seq "$BATCH"); do curl -s "$url" >"$dir/m"; done
		t1=$(date +%s%N); c1=$(ticks "$sp")
		echo $(( (t1 - t0) / BATCH / 1000 )) >>"$dir/s.wall"
		echo $(( (c1 - c0) * 1000000 / hz / BATCH )) >>"$dir/s.cpu"
		awk '$1 ~ /^jemattach_target_held_seconds/ {print $2 * 1e6}' "$dir/m" >>"$dir/s.held"

		t0=$(date +%s%N)
		/usr/bin/time -f "%U %S" -o "$dir/time" bash -c '
			for _ in $(seq '"$BATCH"'); do
				for p in '"${fix[*]:0:n}"'; do
					"'"$J"'" -v "$p" get stats.allocated stats.active stats.metadata \
						stats.resident stats.mapped stats.retained version opt.prof \
						2>>"'"$dir"'/g.err" >/dev/null
				done
			done'
		t1=$(date +%s%N)
		echo $(( (t1 - t0) / BATCH / 1000 )) >>"$dir/g.wall"
		awk -v b="$BATCH" '{printf "%d\n", ($1 + $2) * 1e6 / b}' "$dir/time" >>"$dir/g.cpu"
		sed -n 's/.*held for \([0-9.]*\) ms.*/\1/p' "$dir/g.err" | awk '{print $1 * 1000}' >>"$dir/g.held"
		: >"$dir/g.err"
	done
	[[ -n ${BENCH_DEBUG:-} ]] && head "$dir"/g.* "$dir"/s.* >&2
	kill "$sp"; wait "$sp" 2>/dev/null
	sw=$(med <"$dir/s.wall"); gw=$(med <"$dir/g.wall")
	printf '%-8s %12.2f %12.2f %12.2f %12.2f %12.3f %12.3f %8.2f\n' "$n" \
		"$(echo "$sw / 1000" | bc -l)" "$(echo "$gw / 1000" | bc -l)" \
		"$(echo "$(med <"$dir/s.cpu") / 1000" | bc -l)" "$(echo "$(med <"$dir/g.cpu") / 1000" | bc -l)" \
		"$(echo "$(med <"$dir/s.held") / 1000" | bc -l)" "$(echo "$(med <"$dir/g.held") / 1000" | bc -l)" \
		"$(echo "$sw / $gw" | bc -l)"
done
# Discovery at rest: a scan of all of /proc that chooses nothing (no probe).
for _ in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 40000))
	"$J" serve --listen "127.0.0.1:$port" --target 'comm=^$' --discover-interval 0.5 2>"$dir/serve.err" &
	sp=$!
	pids+=($sp)
	serving "$sp" && break
done
: >"$dir/scan"
for _ in $(seq 10); do
	sleep 0.5
	curl -s "http://127.0.0.1:$port/targets" | jq -r '"\(.scan_seconds * 1e6 | floor) \(.scan_cpu_seconds * 1e6 | floor)"' >>"$dir/scan"
done
kill "$sp"; wait "$sp" 2>/dev/null
echo "discovery: a scan of /proc ($(ls -d /proc/[0-9]* 2>/dev/null | wc -l) processes, none chosen):" \
	"$(cut -d' ' -f1 "$dir/scan" | med | awk '{printf "%.2f", $1 / 1000}') ms wall," \
	"$(cut -d' ' -f2 "$dir/scan" | med | awk '{printf "%.2f", $1 / 1000}') ms CPU (medians of 10)"
for n in $COUNTS; do
	read -r s p <<<"${probe_s[$n]}"
	echo "  the first scan, with $p probes: $(awk -v s="$s" 'BEGIN {printf "%.1f", s * 1000}') ms wall"
done
echo "scrape/gets ms: wall per /metrics vs per loop of one get per target (medians);"
echo "cpu ms: server + children vs the gets; held ms: per target per scrape (median);"
echo "wall x: scrape / gets (below 1: serve is faster)."

# --- heap answers: one copy however many clients ----------------------------
HEAP_MB=${HEAP_MB:-128}
HEAP_N=${HEAP_N:-16}
((HEAP_MB > 0)) || exit 0
mkfifo "$dir/heap.in"
MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0 "$F/servefix" <"$dir/heap.in" >"$dir/heap.out" &
hp=$!
pids+=($hp)
exec {hfd}>"$dir/heap.in"
# About 1.6 KB of profile a site at 100 frames (80000 sites: 128 MB).
echo "sites $((HEAP_MB * 625)) 100" >&$hfd
for _ in $(seq 600); do grep -q '^ok' "$dir/heap.out" && break; sleep 0.1; done
"$J" -t 60 "$hp" prof dump -o "$dir/big.heap" >/dev/null 2>&1
echo "heap answers: a dump of $(( $(stat -c %s "$dir/big.heap") >> 20 )) MiB; 1 client, then $HEAP_N at once, a fresh server each"
rm -f "$dir/big.heap"
: >"$dir/h1"; : >"$dir/hn"
for _ in $(seq "${HEAP_ROUNDS:-3}"); do
	for n in 1 "$HEAP_N"; do
		for _ in 1 2 3 4 5; do
			port=$((20000 + RANDOM % 40000))
			"$J" serve --listen "127.0.0.1:$port" --target "pid=$hp" --timeout 60 2>"$dir/serve.err" &
			sp=$!
			pids+=($sp)
			serving "$sp" && break
		done
		t0=$(date +%s%N)
		cl=()
		for _ in $(seq "$n"); do
			curl -s -o /dev/null --max-time 600 "http://127.0.0.1:$port/debug/pprof/heap?pid=$hp" &
			cl+=($!)
		done
		wait "${cl[@]}"
		t1=$(date +%s%N)
		echo "$(awk '/^VmHWM/ {print $2}' "/proc/$sp/status") $(( (t1 - t0) / 1000000 ))" \
			>>"$dir/$([[ $n == 1 ]] && echo h1 || echo hn)"
		kill "$sp"; wait "$sp" 2>/dev/null
	done
done
r1=$(cut -d' ' -f1 "$dir/h1" | med); rn=$(cut -d' ' -f1 "$dir/hn" | med)
w1=$(cut -d' ' -f2 "$dir/h1" | med); wn=$(cut -d' ' -f2 "$dir/hn" | med)
printf '%-10s %14s %14s\n' clients "peak RSS MiB" "wall ms"
printf '%-10s %14.0f %14.0f\n' 1 "$(echo "$r1 / 1024" | bc -l)" "$w1"
printf '%-10s %14.0f %14.0f\n' "$HEAP_N" "$(echo "$rn / 1024" | bc -l)" "$wn"
printf '%-10s %14.2f %14.2f\n' ratio "$(echo "$rn / $r1" | bc -l)" "$(echo "$wn / $w1" | bc -l)"
