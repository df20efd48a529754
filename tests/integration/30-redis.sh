#!/bin/bash
# 30-redis.sh -- Debian's unmodified redis-server on 127.0.0.1.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

rcli() { redis-cli -p "$REDIS_PORT" "$@"; }

t_stats_allocated_agrees_with_info_memory() {
	local pid ours theirs
	start_redis pid
	expect_eq "$(rcli debug populate 20000 key 100)" OK
	# INFO's allocator_allocated is refreshed by Redis's cron every 100 ms: a
	# get that returns faster than that would be compared with the old figure.
	sleep 0.3
	jm "$pid" get stats.allocated version prof.active
	expect_rc 0
	ours=$(awk '$1 == "stats.allocated" {print $2}' <<<"$OUT")
	theirs=$(rcli info memory | tr -d '\r' | awk -F: '$1 == "allocator_allocated" {print $2}')
	# Redis allocates a little between the two reads (client buffers, INFO).
	within "$ours" "$theirs" $((256 * 1024))
	expect_match "$OUT" "version 5\."
	expect_match "$OUT" "prof.active false"
}

t_redis_healthy_after_200_attach_cycles() {
	local pid before
	start_redis pid
	expect_eq "$(rcli set k1 v1)" OK
	before=$(proc_state "$pid")
	for i in $(seq 200); do
		"$JEMATTACH" "$pid" get stats.allocated >/dev/null 2>"$TMPD/err" || fail "cycle $i: $(cat "$TMPD/err")"
		if (( i % 50 == 0 )); then
			expect_eq "$(rcli ping)" PONG
			expect_eq "$(rcli set "k$i" "v$i")" OK
		fi
	done
	expect_eq "$(rcli get k1)" v1
	expect_eq "$(rcli get k200)" v200
	expect_eq "$(rcli ping)" PONG
	expect_state "$pid" "$before"
	expect_eq "$(rcli dbsize)" 5
}

t_info_on_redis_names_the_borrowed_thread() {
	local pid
	start_redis pid
	jm "$pid" info
	expect_rc 0
	expect_match "$OUT" "process +$pid \(redis-server\), [0-9]+ threads"
	# The main thread when it can be had (usually asleep in epoll_wait).
	expect_match "$OUT" "call thread +[0-9]+ \([^)]*\), (asleep in (epoll_wait|epoll_pwait|futex)|running)"
}

run_tests
