#!/bin/bash
# 53-survive-death.sh -- what jemattach's death leaves behind (issue 31): a
# report cut short goes nowhere (nothing on the target's stderr, however it
# is wired, and no thread blocked writing it), and a thread in restart_syscall
# never gets the fallback engine, whose death kills the target, unless
# --force asks for it.
#
# make check runs DEATH_KILLS=40 kills per target; `make soak` 200.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh
source tests/killrounds.sh

KILLS=${DEATH_KILLS:-40}
RESTART_NR=$(sysnr restart_syscall)
# The wait of pollfix's thread that a stop sends to restart_syscall: poll on
# x86_64; arm64 has no poll (libc's is ppoll, restarted as it was, never
# through restart_syscall), so there the restart tests' pollfix sleeps in
# clock_nanosleep (POLLFIX_SLEEP=1), which does (SURVIVE_WAIT=clock_nanosleep
# takes that way on x86_64 too).
if [[ $(uname -m) == x86_64 && ${SURVIVE_WAIT:-poll} == poll ]]; then
	WAIT=poll WAIT_ENV=()
else
	WAIT=clock_nanosleep WAIT_ENV=(env POLLFIX_SLEEP=1)
fi
WAIT_NR=$(sysnr $WAIT)

# stderr_writers PID: the threads of PID in a write to fd 2.
stderr_writers() { grep -ls "^$(sysnr write) 0x2 " /proc/"$1"/task/*/syscall; }

# no_stderr_writer PID ROUND: no thread stays in a write to fd 2 (one passing
# through is not blocked: looked at again 0.2 s later).
no_stderr_writer() {
	[[ -z $(stderr_writers "$1") ]] && return 0
	sleep 0.2
	[[ -z $(stderr_writers "$1") ]] || fail "round $2: a thread of $1 is blocked writing to fd 2"
}

# to_restart PID: stop and continue the process (as a debugger's attach and
# detach do): its wait ($WAIT) resumes in restart_syscall until its timeout.
# Again when the timeout was so near that it returned at once.
to_restart() {
	local nr
	for _ in $(seq 20); do
		# In its wait or already resumed (a stop before the call started).
		for _ in $(seq 200); do
			nr=$(cut -d' ' -f1 "/proc/$1/syscall")
			[[ $nr == "$WAIT_NR" || $nr == "$RESTART_NR" ]] && break
			sleep 0.005
		done
		kill -STOP "$1"
		kill -CONT "$1"
		for _ in $(seq 20); do
			[[ $(cut -d' ' -f1 "/proc/$1/syscall") == "$RESTART_NR" ]] && return 0
			sleep 0.005
		done
	done
	fail "process $1 is not in restart_syscall"
}

t_a_report_cut_short_goes_nowhere() {
	local pid
	KILLED=0 CALLS=0
	# Its stderr: a 4 KiB pipe nobody reads.  A short poll timeout: a kill
	# that leaves it in restart_syscall costs the next run little waiting.
	start_fixture_cmd pid "$FIXTURES/pollfix" 50 pipe
	KR_AFTER=no_stderr_writer kill_rounds "$pid" "$KILLS" "stats json" -
	expect_eq "$(fix "$pid" errbytes)" 0
	expect_eq "$(fix "$pid" status | sed 's/polls=[0-9]* //')" "eintr=0 errors=0"
	jm "$pid" stats --json -o "$TMPD/s.json"
	expect_rc 0
	jq -e '.jemalloc.stats.allocated > 0' "$TMPD/s.json" >/dev/null || fail "no stats"
	expect_eq "$(fix "$pid" errbytes)" 0
	(( CALLS > 0 )) || fail "no kill landed inside a call"
	echo "    pollfix: $KILLED kills, $CALLS seen inside a call" >&2
}

t_a_report_cut_short_goes_nowhere_on_redis() {
	local pid
	KILLED=0 CALLS=0
	REDIS_STDERR=$TMPD/redis.err start_redis pid
	KR_AFTER=no_stderr_writer kill_rounds "$pid" "$KILLS" "stats json" - "$pid"
	expect_eq "$(wc -c <"$TMPD/redis.err")" 0
	expect_eq "$(redis-cli -p "$REDIS_PORT" ping)" PONG
	jm "$pid" stats -o /dev/null
	expect_rc 0
	(( CALLS > 0 )) || fail "no kill landed inside a call"
	echo "    redis: $KILLED kills, $CALLS seen inside a call" >&2
}

# The application's own malloc_message does not change the report, nor
# does it see any of it.
t_an_application_logger_sees_nothing() {
	local pid
	start_fixture_cmd pid sh -c 'exec env VICTIM_LOGGER=1 "$0" 2>"$1"' "$FIXTURES/victim" \
		"$TMPD/victim.err"
	jm "$pid" stats
	expect_rc 0
	expect_match "$OUT" "End jemalloc statistics"
	expect_eq "$ERR" ""
	expect_eq "$(wc -c <"$TMPD/victim.err")" 0
}

t_restart_syscall_never_dies() {
	local pid
	KILLED=0 CALLS=0
	start_fixture_cmd pid "${WAIT_ENV[@]}" "$FIXTURES/pollfix" 1000
	KR_BEFORE=to_restart kill_rounds "$pid" "$KILLS" "stats get" -
	expect_eq "$(fix "$pid" status | sed 's/polls=[0-9]* //')" "eintr=0 errors=0"
	(( CALLS > 0 )) || fail "no kill landed inside a call"
	echo "    pollfix in restart_syscall: $KILLED kills, $CALLS seen inside a call" >&2
}

t_restart_syscall_is_waited_for_and_said() {
	local pid
	start_fixture_cmd pid "${WAIT_ENV[@]}" "$FIXTURES/pollfix" 1500
	# What a debugger's attach and detach leave.
	gdb -p "$pid" -batch -ex detach >/dev/null 2>&1 || to_restart "$pid"
	[[ $(cut -d' ' -f1 "/proc/$pid/syscall") == "$RESTART_NR" ]] || to_restart "$pid"
	jm -v "$pid" get stats.allocated
	expect_rc 0
	expect_match "$ERR" "tid $pid is in restart_syscall [^"$'\n'"]*; waiting up to [0-9]+ ms"
	expect_match "$ERR" "tid $pid left restart_syscall after [0-9.]+ ms"
	expect_match "$ERR" "using tid $pid \\(pollfix\\), asleep in $WAIT; self-restoring calls"
	to_restart "$pid"
	jm "$pid" info
	expect_rc 0
	expect_match "$OUT" "call thread +$pid \\(pollfix\\), asleep in $WAIT; self-restoring calls, after waiting [0-9]+ ms for tid $pid to leave restart_syscall"
	expect_eq "$(fix "$pid" status | sed 's/polls=[0-9]* //')" "eintr=0 errors=0"
}

t_restart_syscall_another_thread_is_chosen() {
	local pid
	start_fixture_cmd pid "${WAIT_ENV[@]}" "$FIXTURES/pollfix" 60000 - thread
	to_restart "$pid"
	jm -v "$pid" get stats.allocated
	expect_rc 0
	expect_match "$ERR" "using tid [0-9]+ \\(pollfix\\), asleep in read; self-restoring calls"
	[[ $ERR != *"using tid $pid "* ]] || fail "the thread in restart_syscall was used"
	[[ $ERR != *waiting* ]] || fail "waited although another thread was idle: $ERR"
}

t_restart_syscall_only_force_reaches_the_fallback_engine() {
	local pid
	start_fixture_cmd pid "${WAIT_ENV[@]}" "$FIXTURES/pollfix" 60000
	to_restart "$pid"
	jm --timeout 0.5 "$pid" get stats.allocated
	expect_rc 5
	expect_match "$ERR" "tid $pid \\(pollfix\\) is in restart_syscall.*still there after 500 ms.*--force"
	jm "$pid" info
	expect_rc 5
	# --force: the fallback engine, with a warning naming the risk.
	jm --force "$pid" get stats.allocated
	expect_rc 0
	expect_match "$ERR" "warning: tid $pid: fallback call engine \\(forced\\): tid $pid is stopped in restart_syscall; if jemattach dies during a call, process $pid dies too"
	jm --force "$pid" info
	expect_rc 0
	expect_match "$OUT" "call thread +$pid \\(pollfix\\), asleep in restart_syscall; fallback engine \\(forced\\): tid $pid is stopped in restart_syscall"
	# The fallback engine puts it back into the same wait: no EINTR.
	expect_eq "$(cut -d' ' -f1 "/proc/$pid/syscall")" "$RESTART_NR"
	expect_eq "$(fix "$pid" status | sed 's/polls=[0-9]* //')" "eintr=0 errors=0"
}

run_tests
