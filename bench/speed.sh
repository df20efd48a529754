#!/bin/bash
# speed.sh -- how fast jemattach is and how much its targets feel it, in one
# interleaved run: get/stats/prof dump against the gdb recipe on Redis, thread
# scaling, arenas (held time against the target's own malloc_stats_print),
# the stop a target measures itself, and Redis under redis-benchmark.
#
# Only processes started here are touched (Redis on 127.0.0.1, our fixtures),
# and all are reaped.  N (default 15) runs per cell, medians; WINDOWS (40)
# pause windows per cell; ROUNDS (5) Redis load rounds of LOAD_S (4) seconds.
# The machine and its load are printed first: read ratios, not absolutes.
set -u
cd "$(dirname "$0")/.."
N=${N:-15}
J=${JEMATTACH:-build/jemattach}
F=${FIXTURES:-build/fixtures}
LOAD_S=${LOAD_S:-4}
ROUNDS=${ROUNDS:-5}
dir=$(mktemp -d /tmp/jemattach-bench.XXXXXX)
# The symbol cache: the bench's own (filled by the first run, as a user's is),
# removed with the rest.
export XDG_CACHE_HOME=$dir/cache
pids=()
cleanup() {
	touch "$dir/stop"
	for p in "${loops[@]}"; do wait "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$dir"
}
loops=()
# every CMD... : run CMD every SEC seconds in the background until $dir/stop
# exists; stopped with stop_loops, which lets the command in flight finish (a
# gdb killed while attached leaves the target stopped or loses its signals).
every() {
	local sec=$1; shift
	rm -f "$dir/stop"
	( while [[ ! -e $dir/stop ]]; do "$@" >/dev/null 2>&1; sleep "$sec"; done ) &
	loops+=("$!")
}
stop_loops() {
	touch "$dir/stop"
	for p in "${loops[@]}"; do wait "$p" 2>/dev/null; done
	loops=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source bench/lib.bash	# median, wall_ms
held_ms() { "$@" 2>&1 >/dev/null | sed -n 's/.*held for \([0-9.]*\) ms$/\1/p' | tail -1; }
col() { awk -v c="$1" '{print $c}'; }

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)," \
	"kernel $(uname -r); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "N=$N runs per cell, interleaved; medians"

# --- Redis: the gdb recipe against jemattach ------------------------------------
port=$((20000 + RANDOM % 40000))
MALLOC_CONF=prof:true,prof_active:false redis-server --port "$port" --bind 127.0.0.1 \
	--save '' --appendonly no --enable-debug-command local --dir "$dir" --logfile "$dir/redis.log" \
	--daemonize no &
rpid=$!
pids+=("$rpid")
for _ in $(seq 100); do [[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] && break; sleep 0.05; done
# Checked: a Redis refusing DEBUG would leave an empty server measured as a full one.
[[ $(redis-cli -p "$port" debug populate 200000 key 100) == OK ]] ||
	{ echo "speed.sh: redis-cli debug populate failed" >&2; exit 1; }
# hf FILE RUNS CMD: hyperfine's median wall and mean CPU (user + system) of
# RUNS runs of CMD, in ms, appended to FILE.
hf() {
	hyperfine -N -w 1 -r "$2" --export-csv "$dir/hf.csv" "$3" >/dev/null 2>&1
	# From the end: the command itself may hold commas.
	awk -F, 'NR == 2 {printf "%.3f %.3f\n", $(NF - 4) * 1000, ($(NF - 3) + $(NF - 2)) * 1000}' \
		"$dir/hf.csv" >>"$1"
}
rss_kb() { /usr/bin/time -f '%M' -o "$dir/t" "$@" >/dev/null 2>&1; cat "$dir/t"; }
gdb_call="gdb -p $rpid -batch -nx -ex 'call (int)mallctl(\"prof.active\",0,0,0,0)'"
: >"$dir/v" >"$dir/get" >"$dir/getnc" >"$dir/gdb" >"$dir/held" >"$dir/stats" >"$dir/statsj" >"$dir/dump" \
	>"$dir/stats_held" >"$dir/statsj_held" >"$dir/get_rss" >"$dir/gdb_rss"
for i in $(seq "$N"); do
	hf "$dir/v" 5 "$J -V"
	hf "$dir/get" 5 "$J $rpid get stats.allocated"
	hf "$dir/getnc" 5 "$J --no-cache $rpid get stats.allocated"
	hf "$dir/gdb" 1 "$gdb_call"
	rss_kb "$J" "$rpid" get stats.allocated >>"$dir/get_rss"
	rss_kb gdb -p "$rpid" -batch -nx -ex 'call (int)mallctl("prof.active",0,0,0,0)' >>"$dir/gdb_rss"
	held_ms "$J" -v "$rpid" get stats.allocated >>"$dir/held"
	wall_ms "$J" "$rpid" stats >>"$dir/stats"
	held_ms "$J" -v "$rpid" stats >>"$dir/stats_held"
	wall_ms "$J" "$rpid" stats --json >>"$dir/statsj"
	held_ms "$J" -v "$rpid" stats --json >>"$dir/statsj_held"
	wall_ms "$J" "$rpid" prof dump -o "$dir/p.$i.heap" >>"$dir/dump"
	rm -f "$dir/p.$i.heap"
done
gw=$(col 1 <"$dir/get" | median); gc=$(col 2 <"$dir/get" | median); gr=$(median <"$dir/get_rss")
dw=$(col 1 <"$dir/gdb" | median); dc=$(col 2 <"$dir/gdb" | median); dr=$(median <"$dir/gdb_rss")
echo
echo "Redis $(redis-server --version | awk '{print $3}'), 200000 keys (hyperfine: median wall, mean CPU):"
printf '  %-34s wall %8.2f ms  cpu %7.2f ms  peak RSS %6d KiB  thread held %s ms\n' \
	"jemattach get stats.allocated" "$gw" "$gc" "$gr" "$(median <"$dir/held")"
printf '  %-34s wall %8.2f ms  cpu %7.2f ms  (jemalloc searched for every time)\n' \
	"jemattach --no-cache get" "$(col 1 <"$dir/getnc" | median)" "$(col 2 <"$dir/getnc" | median)"
printf '  %-34s wall %8.2f ms  cpu %7.2f ms  (start-up and exit alone)\n' \
	"jemattach -V" "$(col 1 <"$dir/v" | median)" "$(col 2 <"$dir/v" | median)"
printf '  %-34s wall %8.2f ms  cpu %7.2f ms  peak RSS %6d KiB  every thread stopped\n' \
	"gdb -batch call mallctl" "$dw" "$dc" "$dr"
awk -v a="$dw" -v b="$gw" -v c="$dc" -v d="$gc" -v e="$dr" -v f="$gr" 'BEGIN {
	printf "  gdb / jemattach: wall %.0fx, cpu %.0fx, peak RSS %.1fx\n", a / b, c / d, e / f }'
printf '  %-34s wall %8.2f ms  thread held %s ms\n' "jemattach stats" \
	"$(median <"$dir/stats")" "$(median <"$dir/stats_held")"
printf '  %-34s wall %8.2f ms  thread held %s ms\n' "jemattach stats --json" \
	"$(median <"$dir/statsj")" "$(median <"$dir/statsj_held")"
printf '  %-34s wall %8.2f ms\n' "jemattach prof dump" "$(median <"$dir/dump")"

# --- fixtures speaking the line protocol ---------------------------------------
# start NAME BIN: start a fixture on FIFOs; its pid in FPID[NAME], fds kept open.
declare -A FPID FIN FOUT
start() {
	mkfifo "$dir/$1.in" "$dir/$1.out"
	"$2" <"$dir/$1.in" >"$dir/$1.out" &
	FPID[$1]=$!
	pids+=("$!")
	exec {fd_in}>"$dir/$1.in" {fd_out}<"$dir/$1.out"
	FIN[$1]=$fd_in
	FOUT[$1]=$fd_out
	read -r _ <&"${FOUT[$1]}"
}
ask() { local l; echo "$2" >&"${FIN[$1]}"; read -r l <&"${FOUT[$1]}"; echo "$l"; }

# --- thread scaling --------------------------------------------------------------
for t in 10 100 1000; do
	start "p$t" "$F/pausefix"
	ask "p$t" "threads $t" >/dev/null
done
: >"$dir/tw10" >"$dir/tw100" >"$dir/tw1000" >"$dir/th10" >"$dir/th100" >"$dir/th1000"
for i in $(seq "$N"); do
	for t in 10 100 1000; do
		wall_ms "$J" "${FPID[p$t]}" get stats.allocated >>"$dir/tw$t"
		held_ms "$J" -v "${FPID[p$t]}" get stats.allocated >>"$dir/th$t"
	done
done
: >"$dir/threads"
for i in 1 2 3; do wall_ms "$J" "${FPID[p1000]}" threads >>"$dir/threads"; done
echo
echo "thread scaling (pausefix: main thread in nanosleep, N more threads asleep):"
for t in 10 100 1000; do
	printf '  %4d threads: get wall %7.2f ms, held %s ms\n' "$t" "$(median <"$dir/tw$t")" \
		"$(median <"$dir/th$t")"
done
awk -v a="$(median <"$dir/tw1000")" -v b="$(median <"$dir/tw10")" \
	'BEGIN {printf "  1000 / 10 threads get wall: %.2fx\n", a / b}'
printf '  threads on 1000 threads: %.0f ms (median of 3)\n' "$(median <"$dir/threads")"

# --- the stop the target feels ---------------------------------------------------
# Per get: the pause the fixture measured around the stop jemattach reports
# (-vv gives the stop's two instants on the fixture's clock), and the pauses
# over 1 ms in windows holding nothing but the one command -- clock, nap and
# reports through bash builtins, -vv's lines read from a file afterwards --
# against idle windows as long and windows starting `jemattach -V`.  (Until
# run O each window also started date twice, sed and a subshell, and those
# starts alone made most of its pauses.)
WINDOWS=${WINDOWS:-40}
# report NAME: the fixture's pauses over 1 ms since its last report, in $nl,
# with no subshell: a fork in the window would be a process start too.
report() { echo report >&"${FIN[$1]}"; read -r nl _ <&"${FOUT[$1]}"; }
# idle NAME T0 T1: the same for a window as long as T0..T1 ($EPOCHREALTIME)
# with nothing in it.
idle() {
	local d=$((${3/./} - ${2/./})) secs
	printf -v secs '%d.%06d' $((d / 1000000)) $((d % 1000000))
	report "$1"
	read -r -t "$secs" -u "$nap" _
	report "$1"
}
mkfifo "$dir/nap"
exec {nap}<>"$dir/nap"
echo
echo "the stop the target measures (pausefix: main thread loops on nanosleep(200us)):"
for t in 10 1000; do
	p=p$t
	pw=0 iw=0 vw=0
	: >"$dir/diff"
	for i in $(seq "$WINDOWS"); do
		report "$p"
		t0=$EPOCHREALTIME
		"$J" -vv "${FPID[$p]}" get stats.allocated 2>"$dir/vv" >/dev/null
		t1=$EPOCHREALTIME
		report "$p"
		pw=$((pw + nl))
		read -r st rn < <(sed -n 's/.*stopped at \([0-9]*\) ns, running at \([0-9]*\) ns.*/\1 \2/p' \
			"$dir/vv")
		# The pause overlapping the stop, minus the hold jemattach reported.
		read -r us _ < <(ask "$p" "during $st $rn")
		[[ $us == none ]] && us=0
		awk -v s="$st" -v r="$rn" -v us="$us" 'BEGIN {printf "%.3f\n", us / 1000 - (r - s) / 1e6}' \
			>>"$dir/diff"
		idle "$p" "$t0" "$t1"
		iw=$((iw + nl))
		report "$p"
		"$J" -V >/dev/null 2>&1
		report "$p"
		vw=$((vw + nl))
	done
	printf '  %4d threads, %d windows each: pauses > 1 ms: %d with a get, %d idle, %d starting jemattach -V\n' \
		"$t" "$WINDOWS" "$pw" "$iw" "$vw"
	printf '        pause the fixture measured around the stop - held, ms: median %s (max %s)\n' \
		"$(median <"$dir/diff")" "$(sort -n "$dir/diff" | tail -1)"
done

# The same through one `shell` session: no process started for a get either.
for t in 10 1000; do
	p=p$t
	mkfifo "$dir/sh$t.in" "$dir/sh$t.out"
	"$J" "${FPID[$p]}" shell <"$dir/sh$t.in" >"$dir/sh$t.out" 2>/dev/null &
	pids+=("$!")
	exec {si}>"$dir/sh$t.in" {so}<"$dir/sh$t.out"
	echo "get stats.allocated" >&"$si"
	read -r _ <&"$so"
	pw=0 iw=0
	for i in $(seq "$WINDOWS"); do
		report "$p"
		t0=$EPOCHREALTIME
		echo "get stats.allocated" >&"$si"
		read -r _ <&"$so"
		t1=$EPOCHREALTIME
		report "$p"
		pw=$((pw + nl))
		idle "$p" "$t0" "$t1"
		iw=$((iw + nl))
	done
	exec {si}>&- {so}<&-
	printf '  %4d threads, %d gets in one shell session: pauses > 1 ms: %d with a get, %d idle\n' \
		"$t" "$WINDOWS" "$pw" "$iw"
done
exec {nap}<&-

# --- arenas: held against the target's own malloc_stats_print --------------------
echo
echo "stats on many arenas (jemfix): thread held vs the same malloc_stats_print run in-process:"
for a in 1 64 512; do
	start "a$a" "$F/jemfix"
	[[ $a -gt 1 ]] && ask "a$a" "arenas $a" >/dev/null
done
for a in 1 64 512; do
	: >"$dir/ah" >"$dir/ajh" >"$dir/ain" >"$dir/ajin"
	for i in $(seq "$N"); do
		held_ms "$J" -v "${FPID[a$a]}" stats >>"$dir/ah"
		ask "a$a" tstats | awk '{printf "%.3f\n", $2 / 1e6}' >>"$dir/ain"
		held_ms "$J" -v "${FPID[a$a]}" stats --json >>"$dir/ajh"
		ask "a$a" "tstats J" | awk '{printf "%.3f\n", $2 / 1e6}' >>"$dir/ajin"
	done
	printf '  %3d arenas: stats held %7s ms, in-process %7s ms; --json held %7s ms, in-process %7s ms\n' \
		"$a" "$(median <"$dir/ah")" "$(median <"$dir/ain")" "$(median <"$dir/ajh")" "$(median <"$dir/ajin")"
done

# --- Redis clients while jemattach (or gdb) watches ------------------------------
# A run shorter than a few seconds or a ratio from one or two rounds is noise
# here: 1 s runs of the same idle Redis differ by 20%.  So each run is sized
# from a measured rate to LOAD_S seconds, and each cell is the median over
# ROUNDS rounds of its ratio to that round's own baseline, with the spread.
echo
# Without -r, redis-benchmark GETs the one key "key:000000000000": a hit.
redis-cli -p "$port" set key:000000000000 "$(printf '%0100d' 0)" >/dev/null
rate=$(redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -t get -n 50000 -d 100 --csv 2>/dev/null |
	awk -F, 'NR == 2 {gsub(/"/, ""); printf "%d", $2}')
# redis-benchmark prints its CSV line only when a test finishes: a fixed count.
reqs=$((${rate:-30000} * LOAD_S))
echo "Redis under redis-benchmark (50 clients, GET of a 100-byte value, $reqs requests," \
	"about ${LOAD_S} s, per run; $ROUNDS rounds interleaved; medians of per-round ratios, min-max):"
run_load() {
	redis-benchmark -h 127.0.0.1 -p "$port" -c 50 -t get -n "$reqs" -d 100 --csv 2>/dev/null |
		awk -F, 'NR == 2 {gsub(/"/, ""); print $2, $7, $8}'
}
: >"$dir/l_none" >"$dir/l_watch" >"$dir/l_json" >"$dir/l_gdb" >"$dir/w.jsonl"
for r in $(seq "$ROUNDS"); do
	run_load >>"$dir/l_none"
	"$J" "$rpid" watch -i 0.1 -o "$dir/w$r.jsonl" >/dev/null 2>&1 &
	w=$!
	run_load >>"$dir/l_watch"
	kill -INT "$w"; wait "$w" 2>/dev/null
	cat "$dir/w$r.jsonl" >>"$dir/w.jsonl"
	every 0.1 "$J" "$rpid" stats --json
	run_load >>"$dir/l_json"
	stop_loops
	every 1 gdb -p "$rpid" -batch -nx -ex 'call (int)mallctl("prof.active",0,0,0,0)'
	run_load >>"$dir/l_gdb"
	stop_loops
done
for m in none watch json gdb; do
	case $m in
	none) what="nothing attached";;
	watch) what="jemattach watch -i 0.1";;
	json) what="jemattach stats --json every 100 ms";;
	gdb) what="gdb call recipe every 1 s";;
	esac
	paste -d' ' "$dir/l_$m" "$dir/l_none" | awk '{print $1 / $4}' >"$dir/ratio"
	printf '  %-38s %9.0f req/s, %.2f of baseline (%s-%s), p99 %s ms, max %s ms\n' "$what" \
		"$(col 1 <"$dir/l_$m" | median)" "$(median <"$dir/ratio")" \
		"$(sort -n "$dir/ratio" | head -1 | xargs printf '%.2f')" \
		"$(sort -n "$dir/ratio" | tail -1 | xargs printf '%.2f')" \
		"$(col 2 <"$dir/l_$m" | median)" "$(col 3 <"$dir/l_$m" | median)"
done
if [[ -s $dir/w.jsonl ]]; then
	grep -o '"hold_ns":[0-9]*' "$dir/w.jsonl" | cut -d: -f2 |
		awk '{print $1 / 1e6}' | median | xargs printf '  watch samples: hold_ns median %s ms\n'
fi
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
