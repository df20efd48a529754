#!/bin/bash
# 52-survive.sh -- the target survives whatever happens to jemattach and never
# sees EINTR: SIGKILL (and SIGSTOP-then-SIGKILL) of jemattach at random
# instants of get / stats / stats --json / prof dump / --freeze stats on a
# self-checking multi-threaded target and on Redis under redis-benchmark;
# jemattach crashing at each engine step; every EINTR interface borrowed.
#
# make check runs the short version (50 + 25 runs); `make soak` sets
# SURVIVE_KILLS=750 SURVIVE_EINTR=200 for the long one (a run ends by itself
# before the kill about a third of the time).
source tests/lib.sh
source tests/killrounds.sh

KILLS=${SURVIVE_KILLS:-50}
EINTR_ROUNDS=${SURVIVE_EINTR:-5}
t_killed_jemattach_never_hurts_a_busy_target() {
	local pid tids vec epoll
	KILLED=0 CALLS=0
	touch "$TMPD/start"
	# Its stderr collects what reports were cut short by our death.
	start_fixture_cmd pid sh -c 'exec env MALLOC_CONF=prof:true,lg_prof_sample:19 "$0" 2>"$1"' \
		"$FIXTURES/victim" "$TMPD/victim.err"
	tids=$(fix "$pid" tids)
	vec=$(grep -o 'vec=[0-9]*' <<<"$tids" | head -1) vec=${vec#vec=}
	epoll=$(grep -o 'epoll=[0-9]*' <<<"$tids" | head -1) epoll=${epoll#epoll=}
	KR_AFTER=progress10 kill_rounds "$pid" "$KILLS" "get stats json dump freeze" - - "$vec" "$epoll"
	# EINTR is not asserted here: a SIGKILL in the microseconds between our
	# stop of a thread in epoll_wait & co and its restart leaves it the EINTR
	# (README, Safety).  It is counted.
	expect_match "$(fix "$pid" status)" "^errors=0 vec_bad=0 eintr=[0-9]+ early=0$"
	# Nor did any report cut short by a kill reach its stderr.
	expect_eq "$(wc -c <"$TMPD/victim.err")" 0
	EINTRS=$(fix "$pid" status) EINTRS=${EINTRS#*eintr=} EINTRS=${EINTRS%% *}
	# No lock was left held: jemalloc still answers, in the target and to us.
	jm --timeout 5 "$pid" stats -o /dev/null
	expect_rc 0
	# The dump directories of killed runs are gone after one more dump.
	expect_swept "$pid" "$TMPD/start"
	echo "    victim: $KILLED kills, $CALLS seen inside a call, $EINTRS EINTR" >&2
}

t_killed_jemattach_never_hurts_redis_under_load() {
	local pid bpid n
	KILLED=0 CALLS=0
	start_redis pid
	start_bg bpid sh -c 'exec redis-benchmark -p "$1" -n 100000000 -c 4 -r 10000 -t set,get,lpush -q >/dev/null 2>&1' sh "$REDIS_PORT"
	sleep 0.5
	kill_rounds "$pid" "$((KILLS / 2))" "get stats json freeze" - "$pid"
	expect_eq "$(redis-cli -p "$REDIS_PORT" ping)" PONG
	n=$(redis-cli -p "$REDIS_PORT" dbsize)
	[[ $n -gt 0 ]] || fail "redis has no keys after the benchmark"
	jm --timeout 5 "$pid" get stats.allocated
	expect_rc 0
	echo "    redis: $KILLED kills, $CALLS seen inside a call" >&2
}

# arm64 with SVE: jemattach killed inside its call on the thread whose
# z8-z15 are checked (borrowed while it spins with live SVE state, the
# frame's sve_context puts it back; or asleep, with none) or on one whose
# v8-v15 are (asleep in nanosleep: FP/SIMD only), while every such thread
# checks its registers.  Rounds until N kills landed inside a call (a call
# killat misses ends by itself: no kill); progress every 10 rounds.
# `make check-aarch64` runs SURVIVE_SVE_KILLS=100.
t_killed_jemattach_never_changes_sve_registers() {
	local pid tids sve vec sigt masks i n=${SURVIVE_SVE_KILLS:-20} rounds=0
	start_fixture_cmd pid sh -c 'exec env MALLOC_CONF=prof:true "$0" 2>"$1"' "$FIXTURES/victim" \
		"$TMPD/victim.err"
	tids=$(fix "$pid" tids)
	sve=$(grep -o 'sve=[0-9]*' <<<"$tids" || true) sve=${sve#sve=}
	[[ -n $sve ]] || skip "no SVE on this CPU"
	vec=$(grep -o 'vec=[0-9]*' <<<"$tids" | head -1) vec=${vec#vec=}
	sigt=$(grep -o 'sigtimedwait=[0-9]*' <<<"$tids") sigt=${sigt#*=}
	# The masks every round must leave, read once, while v_sigtimedwait waits
	# (nearly always): its SigBlk lacks SIGUSR2 then.  Read before each round,
	# a snapshot between two of its waits stalled the guest's soak for minutes
	# (intact's slow looks there seldom meet that instant again).
	for ((i = 0; i < 100; i++)); do
		masks=$(masks "$pid")
		[[ $masks == *"$sigt 0000000000000000"* ]] && break
		nap 0.01
	done
	KILLED=0 CALLS=0
	while ((CALLS < n && rounds < 3 * n)); do
		KR_MASKS=$masks KR_IN_CALL=1 kill_rounds "$pid" 1 "get stats" "$sve" "$sve" "$vec"
		rounds=$((rounds + 1))
		((rounds % 10)) || progress "$pid" "$rounds"
	done
	progress "$pid" "$rounds"
	((CALLS >= n)) || fail "$CALLS kills inside a call in $rounds rounds (wanted $n)"
	# Only v_sve and v_vec are borrowed here: the interface threads' early
	# wake-ups are not this test's (in the guest, under load, an accept with
	# SO_RCVTIMEO 300 ms once returned 39 ms early); busy_target asserts them.
	expect_match "$(fix "$pid" status)" "^errors=0 vec_bad=0 eintr=[0-9]+ early=[0-9]+$"
	expect_match "$(fix "$pid" vec)" "^vec=0/[0-9]+ vec=0/[0-9]+ sve=0/[0-9]+$"
	expect_eq "$(wc -c <"$TMPD/victim.err")" 0
	echo "    sve: $rounds rounds, $KILLED kills, $CALLS inside a call; $(fix "$pid" vec) (bad/loops)" >&2
}

# progress10 PID ROUND: progress after every 10th round (as KR_AFTER).
progress10() { ((($2 + 1) % 10)) || progress "$1" "$(($2 + 1))"; }

# progress PID ROUNDS: the counts so far (a long soak under emulation says
# where it is).
progress() {
	echo "    $(date +%T) round $2: $KILLED kills, $CALLS inside a call; $(fix "$1" status); $(fix "$1" vec); EINTR/early: $(fix "$1" eintr); most ms early: $(fix "$1" short)" >&2
}

t_crash_at_every_engine_step() {
	local pid before step vec
	crash_hooks
	start_fixture_cmd pid sh -c 'exec env MALLOC_CONF=prof:true "$0" 2>"$1"' "$FIXTURES/victim" \
		"$TMPD/victim.err"
	vec=$(fix "$pid" tids | grep -o 'vec=[0-9]*' | head -1) vec=${vec#vec=}
	before=$(stable_masks "$pid")
	for step in seized hijacked frame regs mask text sigreturn restored; do
		RC=0
		{ JEMATTACH_TEST_CRASH_AT=$step "$JEMATTACH_HOOKS" --thread "$vec" "$pid" stats -o /dev/null; } \
			2>/dev/null || RC=$?
		[[ $RC == 139 ]] || fail "step $step: jemattach did not crash there (exit $RC)"
		intact "$pid" "$before"
	done
	# A crash after the registers of malloc_stats_print were set leaves the
	# rest of the report to the target's getpid (the text sink): nothing
	# reaches its stderr.
	expect_eq "$(wc -c <"$TMPD/victim.err")" 0
	expect_eq "$(fix "$pid" status)" "errors=0 vec_bad=0 eintr=0 early=0"
}

t_no_eintr_from_any_interface() {
	local pid t name tid i
	start_fixture_cmd pid "$FIXTURES/victim" 1
	for t in $(fix "$pid" tids); do
		name=${t%%=*} tid=${t#*=}
		[[ $name == alloc || $name == fiber ]] && continue
		for ((i = 0; i < EINTR_ROUNDS; i++)); do
			jm --thread "$tid" "$pid" get stats.allocated
			expect_rc 0
		done
	done
	sleep 0.4	# every timed wait that was borrowed has ended since
	expect_eq "$(fix "$pid" eintr)" \
		"epoll=0/0 epoll_to=0/0 accept_to=0/0 recv_to=0/0 semop=0/0 semtimedop=0/0 sigtimedwait=0/0 io_getevents=0/0 inotify=0/0 pipe=0/0"
	expect_eq "$(fix "$pid" status)" "errors=0 vec_bad=0 eintr=0 early=0"
}

t_a_heap_block_stack_is_never_written() {
	local pid fiber
	start_fixture_cmd pid "$FIXTURES/victim" 1
	fiber=$(fix "$pid" tids | grep -o 'fiber=[0-9]*') fiber=${fiber#fiber=}
	sleep 0.1
	jm --thread "$fiber" "$pid" get stats.allocated
	expect_rc 5
	expect_match "$ERR" "is not in a known stack"
	for _ in 1 2 3 4 5; do
		jm "$pid" stats -o /dev/null
		expect_rc 0
	done
	sleep 0.1
	expect_eq "$(fix "$pid" status)" "errors=0 vec_bad=0 eintr=0 early=0"
}

t_engine_is_named_and_an_own_logger_is_handled() {
	local pid
	start_fixture pid "$FIXTURES/victim" VICTIM_LOGGER=1
	jm "$pid" info
	expect_rc 0
	expect_match "$OUT" "call thread .*; self-restoring calls"
	# With write_cb set (the text sink), jemalloc never looks at the
	# application's logger: the same report, no warning.
	jm "$pid" stats
	expect_rc 0
	expect_match "$OUT" "End jemalloc statistics"
	expect_eq "$ERR" ""
	expect_eq "$(fix "$pid" status)" "errors=0 vec_bad=0 eintr=0 early=0"
}

t_freeze_works_on_redis() {
	local pid
	start_redis pid
	jm -v --freeze "$pid" stats
	expect_rc 0
	expect_match "$OUT" "End jemalloc statistics"
	expect_match "$ERR" "every thread stopped for [0-9.]+ ms"
	expect_eq "$(redis-cli -p "$REDIS_PORT" ping)" PONG
}

run_tests
