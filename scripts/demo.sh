#!/bin/bash
# demo.sh -- start a demo jemalloc process (Debian's redis-server on 127.0.0.1),
# show jemattach working on it, and stop it again.
set -u
cd "$(dirname "$0")/.."
J=build/jemattach
dir=$(mktemp -d /tmp/jemattach-demo.XXXXXX)
port=$((20000 + RANDOM % 40000))
MALLOC_CONF=prof:true,prof_active:false redis-server --port "$port" --bind 127.0.0.1 \
	--save '' --appendonly no --enable-debug-command local --dir "$dir" --logfile "$dir/redis.log" --daemonize no &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] && break; sleep 0.05; done
redis-cli -p "$port" debug populate 100000 key 64 >/dev/null

run() { printf '\n$ %s\n' "$*"; "$@"; }
echo "demo: redis-server pid $pid on 127.0.0.1:$port, 100000 keys"
run $J "$pid" info
run $J "$pid" get stats.allocated stats.resident prof.active
printf '\n$ redis-cli info memory | grep allocator_allocated\n'
redis-cli -p "$port" info memory | grep allocator_allocated
run $J "$pid" stats --opts gmdablxeh
printf '\n$ %s | head -12\n' "$J $pid stats"
$J "$pid" stats | head -12
run $J "$pid" set prof.active true
run $J "$pid" set prof.active false
printf '\nredis still answers: %s\n' "$(redis-cli -p "$port" ping)"
