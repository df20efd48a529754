# lib.bash -- sourced by bench scripts (not run by run.sh: not a *.sh).
#
# bench_redis: start Debian's redis-server with 200000 keys on a random port;
# sets $pid, $port and the scratch $dir, all removed at exit.
# bench_scratch: a scratch $dir (with our own symbol cache) and $pids, whose
# processes are killed and reaped, and the dir removed, at exit.
# bench_redis_loaded [ENV=VALUE...]: in a bench_scratch, Debian's redis-server
# (300000 keys) under redis-benchmark's SET, GET and LPUSH of random keys (20
# clients in all, 16 pipelined), its pid in $rpid, port $rport; all in $pids.
# median, wall_ms CMD...: the statistics every bench prints.

bench_redis() {
	dir=$(mktemp -d /tmp/jemattach-bench.XXXXXX)
	port=$((20000 + RANDOM % 40000))
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
		--enable-debug-command local --logfile "$dir/log" --daemonize no &
	pid=$!
	trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
	for _ in $(seq 100); do [[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] && break; sleep 0.05; done
	redis-cli -p "$port" debug populate 200000 key 100 >/dev/null
}

bench_redis_loaded() {
	local t
	for _ in 1 2 3; do	# a port taken meanwhile: another
		rport=$((20000 + RANDOM % 40000))
		env "$@" redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no \
			--dir "$dir" --enable-debug-command local --logfile "$dir/log" --daemonize no &
		rpid=$!
		pids+=("$rpid")
		for _ in $(seq 100); do
			[[ $(redis-cli -p "$rport" ping 2>/dev/null) == PONG ]] && break 2
			kill -0 "$rpid" 2>/dev/null || break
			sleep 0.05
		done
	done
	redis-cli -p "$rport" debug populate 300000 pre 100 >/dev/null
	for t in set:7 get:7 lpush:6; do
		redis-benchmark -p "$rport" -q -n 1000000000 -r 1000000 -t "${t%:*}" -c "${t#*:}" -P 16 \
			-d 200 >/dev/null 2>&1 &
		pids+=($!)
	done
	sleep 1
}

bench_scratch() {
	dir=$(mktemp -d /tmp/jemattach-bench.XXXXXX)
	export XDG_CACHE_HOME=$dir/cache
	pids=()
	trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	      for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	      rm -rf "$dir"' EXIT
	trap 'exit 130' INT TERM
}

# median: of the numbers on stdin, "-" when there are none.
median() { sort -n | awk '{a[NR] = $1} END {if (!NR) print "-"; else print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# wall_ms CMD...: wall time in ms at ns resolution (GNU time has 10 ms steps);
# the difference is taken in the shell, as awk's doubles would round the
# nanosecond clock to 256 ns.
wall_ms() {
	local t0 t1
	t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000))e-3 | awk '{printf "%.3f\n", $1}'
}
