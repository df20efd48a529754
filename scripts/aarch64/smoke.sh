#!/bin/bash
# smoke.sh -- in the arm64 guest (run.sh's default job, after the integration tests): every
# main command against Debian's arm64 redis-server, each printed with its real output and
# judged; the last line is "smoke: N passed, N failed".
# Usage: scripts/aarch64/smoke.sh   (from the tree's top, with build/jemattach built)
set -u
JM=${JEMATTACH:-build/jemattach}
pass=0 fail=0
dir=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
ok() { echo "ok: $*"; pass=$((pass + 1)); }
bad() { echo "FAILED: $*"; fail=$((fail + 1)); }
run() { echo "\$ jemattach $*"; "$JM" "$@" > "$dir/out" 2> "$dir/err"; rc=$?; head -c 3000 "$dir/out";
	[ -s "$dir/err" ] && sed 's/^/  stderr: /' "$dir/err" | head -20; return $rc; }

MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:14 redis-server --port $port --bind 127.0.0.1 --save '' \
	--appendonly no --enable-debug-command yes --dir "$dir" --logfile "$dir/redis.log" --daemonize no > /dev/null 2>&1 &
pid=$!
trap 'kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 200); do [ "$(redis-cli -p $port ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
redis-cli -p $port debug populate 20000 key 100 > /dev/null 2>&1 ||
	for i in $(seq 2000); do echo "SET key:$i $(printf '%0100d' $i)"; done | redis-cli -p $port > /dev/null
echo "redis-server $(redis-server --version | awk '{print $3}') pid $pid on $(uname -m)"

run "$pid" info && ok info || bad "info ($rc)"
# get stats.allocated equals Redis's own allocator_allocated (INFO memory) when read back to back
# on an idle server: the same jemalloc counter, refreshed by the same epoch.
for try in 1 2 3; do
	a=$(redis-cli -p $port info memory | tr -d '\r' | awk -F: '$1 == "allocator_allocated" {print $2}')
	run "$pid" get stats.allocated
	g=$(awk '{print $NF}' "$dir/out" | tail -1)
	b=$(redis-cli -p $port info memory | tr -d '\r' | awk -F: '$1 == "allocator_allocated" {print $2}')
	echo "redis allocator_allocated: $a (before) $b (after); jemattach: $g"
	[ -n "$g" ] && { [ "$g" = "$a" ] || [ "$g" = "$b" ]; } && break
done
if [ -n "$g" ] && { [ "$g" = "$a" ] || [ "$g" = "$b" ]; }; then ok "get stats.allocated = allocator_allocated"
else bad "get stats.allocated ($g) != allocator_allocated ($a/$b)"; fi
run "$pid" stats > /dev/null; rc=$?
grep -q 'Allocated:' "$dir/out" && [ $rc = 0 ] && { grep -m3 -E 'Version|Allocated:' "$dir/out"; ok stats; } || bad "stats ($rc)"
run "$pid" stats --json > /dev/null; rc=$?
[ $rc = 0 ] && jq -e '.jemalloc.stats.allocated > 0' "$dir/out" > /dev/null && ok "stats --json" || bad "stats --json ($rc)"
run "$pid" prof status && ok "prof status" || bad "prof status ($rc)"
run "$pid" prof on && ok "prof on" || bad "prof on ($rc)"
redis-cli -p $port debug populate 5000 more 300 > /dev/null 2>&1
run "$pid" prof dump -o "$dir/redis.heap" && [ -s "$dir/redis.heap" ] && { head -3 "$dir/redis.heap"; ok "prof dump"; } || bad "prof dump ($rc)"
run "$pid" prof off && ok "prof off" || bad "prof off ($rc)"
[ -s "$dir/redis.heap" ] && { run analyze "$dir/redis.heap" --top 5 && ok analyze || bad "analyze ($rc)"; }
# analyze's total equals what jeprof -- of the jemalloc Redis runs with -- makes of the same dump.
if [ -s "$dir/redis.heap" ] && command -v jeprof > /dev/null; then
	want=$(jeprof --text /usr/bin/redis-server "$dir/redis.heap" 2> /dev/null | awk '/^Total:/ {print $2; exit}')
	got=$(awk '/^Total:/ {print $2; exit}' "$dir/out")
	echo "analyze Total: $got MB; jeprof ($(command -v jeprof)) Total: $want MB"
	[ -n "$want" ] && [ -n "$got" ] && awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d * d <= (b / 100 + 0.1) ^ 2) }' &&
		ok "analyze total = jeprof's" || bad "analyze total ($got) != jeprof's ($want)"
fi
run "$pid" prof window 1 -o "$dir/w" --top 5 && ok "prof window" || bad "prof window ($rc)"
run "$pid" threads && grep -q 'redis-server' "$dir/out" && ok threads || bad "threads ($rc)"
# Redis's allocator_allocated, as INFO memory gives it.
allocated() { redis-cli -p $port info memory | tr -d '\r' | awk -F: '$1 == "allocator_allocated" {print $2}'; }
# --emulate: jemalloc's code run in unicorn (arm64 CPU) on a copy of Redis: the same value as
# Redis's own counter, read back to back on the idle server.
for try in 1 2 3; do
	a=$(allocated)
	run --emulate -v "$pid" get stats.allocated
	g=$(tail -1 "$dir/out")
	b=$(allocated)
	echo "redis allocator_allocated: $a (before) $b (after); jemattach --emulate: $g"
	[ -n "$g" ] && { [ "$g" = "$a" ] || [ "$g" = "$b" ]; } && break
done
if [ -n "$g" ] && { [ "$g" = "$a" ] || [ "$g" = "$b" ]; }; then ok "--emulate get stats.allocated = allocator_allocated"
else bad "--emulate get stats.allocated ($g) != allocator_allocated ($a/$b)"; fi
# core: a gcore of the idle Redis; the core's stats.allocated is Redis's counter at that time.
if command -v gcore > /dev/null; then
	a=$(allocated)
	t0=$(date +%s)
	gcore -o "$dir/redis.core" "$pid" > "$dir/gcore.log" 2>&1
	b=$(allocated)
	echo "gcore of $pid: $(stat -c %s "$dir/redis.core.$pid" 2>/dev/null) bytes in $(( $(date +%s) - t0 )) s"
	run -v core "$dir/redis.core.$pid" get stats.allocated
	g=$(tail -1 "$dir/out")
	echo "redis allocator_allocated: $a (before gcore) $b (after); jemattach core: $g"
	[ -n "$g" ] && { [ "$g" = "$a" ] || [ "$g" = "$b" ]; } && ok "core get stats.allocated = allocator_allocated" ||
		bad "core get stats.allocated ($g) != allocator_allocated ($a/$b)"
	rm -f "$dir/redis.core.$pid"
else
	bad "no gcore (gdb) in the guest"
fi
[ "$(redis-cli -p $port ping)" = PONG ] && ok "redis alive and answering" || bad "redis does not answer"
echo "smoke: $pass passed, $fail failed"
[ $fail = 0 ]
