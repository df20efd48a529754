#!/bin/bash
# 20-exitcodes.sh -- every documented exit code, each against a real process.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

t_usage_errors_exit_2() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	jm; expect_rc 2
	jm abc info; expect_rc 2; expect_match "$ERR" "neither a PID nor a command"
	jm "$pid"; expect_rc 2; expect_match "$ERR" "missing COMMAND"
	jm "$pid" frobnicate; expect_rc 2; expect_match "$ERR" 'unknown command "frobnicate"'
	jm --timeout -1 "$pid" info; expect_rc 2; expect_match "$ERR" "invalid --timeout"
	jm "$pid" get; expect_rc 2; expect_match "$ERR" "missing NAME"
	jm "$pid" get 'bad name!'; expect_rc 2; expect_match "$ERR" "invalid mallctl name"
	jm "$pid" set opt.narenas; expect_rc 2
	jm --thread 1 "$pid" info; expect_rc 2; expect_match "$ERR" "not a thread of process $pid"
	jm "$pid" stats --opts z; expect_rc 2
	jm --help; expect_rc 0; expect_match "$OUT" "Exit codes:"
	jm --version; expect_rc 0; expect_match "$OUT" "^jemattach [0-9]"
	expect_eq "$(fix "$pid" ping)" pong
}

t_no_such_process_exit_3() {
	local gone
	sh -c 'exit 0' & gone=$!
	wait "$gone"
	jm "$gone" info
	expect_rc 3
	expect_match "$ERR" "no such process $gone"
}

t_zombie_exit_3() {
	local parent zombie
	# The child exits at once; its parent (exec'd sleep) never reaps it.
	start_bg parent sh -c 'sh -c "exit 0" & exec sleep 60'
	for _ in $(seq 100); do
		zombie=$(pgrep -P "$parent" 2>/dev/null | head -1)
		[[ -n $zombie && $(awk '{print $3}' "/proc/$zombie/stat" 2>/dev/null) == Z ]] && break
		sleep 0.05
	done
	jm "$zombie" info
	expect_rc 3
	expect_match "$ERR" "is a zombie"
}

t_already_traced_exit_3() {
	local pid tracer
	start_fixture pid "$FIXTURES/jemfix"
	start_bg tracer strace -qq -o /dev/null -p "$pid"
	for _ in $(seq 100); do
		[[ $(awk '/TracerPid/ {print $2}' "/proc/$pid/status") != 0 ]] && break
		sleep 0.05
	done
	jm "$pid" info
	expect_rc 3
	expect_match "$ERR" "already traced by process $tracer \(strace\)"
	kill "$tracer"; wait "$tracer" 2>/dev/null || true
	expect_eq "$(fix "$pid" ping)" pong
}

t_ourselves_exit_3() {
	# exec keeps the pid: jemattach is asked to attach to itself.
	RC=0
	OUT=$(bash -c 'exec "$0" $$ info' "$JEMATTACH" 2>&1) || RC=$?
	ERR=$OUT
	expect_rc 3
	expect_match "$ERR" "is jemattach itself"
}

t_kernel_thread_exit_3() {
	# Refused from /proc/2/status alone: nothing is sent to kthreadd.
	jm 2 info
	expect_rc 3
	expect_match "$ERR" "kernel thread"
}

t_other_user_exit_3() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	RC=0
	OUT=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$JEMATTACH" "$pid" info 2>&1) || RC=$?
	ERR=$OUT
	expect_rc 3
	expect_match "$ERR" "runs as uid 0 and jemattach as uid 65534"
	expect_eq "$(fix "$pid" ping)" pong
}

t_no_jemalloc_exit_4() {
	local pid
	start_bg pid sleep 60
	wait_exe "$pid" sleep
	jm "$pid" info
	expect_rc 4
	expect_match "$ERR" "no jemalloc found in process $pid"
	expect_eq "$(awk '{print $3}' "/proc/$pid/stat")" S
}

t_thread_inside_jemalloc_refused_exit_5() {
	local pid bg="" before
	start_fixture pid "$FIXTURES/jemfix" MALLOC_CONF=background_thread:true
	fix "$pid" "alloc 100 100000" >/dev/null
	# jemalloc's own background thread sleeps inside jemalloc.
	for _ in $(seq 100); do
		bg=$(grep -l jemalloc_bg_thd /proc/"$pid"/task/*/comm 2>/dev/null | head -1 | cut -d/ -f5)
		[[ -n $bg ]] && break
		sleep 0.05
	done
	[[ -n $bg ]] || fail "no background thread"
	before=$(proc_state "$pid")
	jm --thread "$bg" "$pid" get stats.allocated
	expect_rc 5
	expect_match "$ERR" "tid $bg \(jemalloc_bg_thd\) is inside jemalloc: .*libjemalloc"
	expect_state "$pid" "$before"
	# Without --thread another, safe thread is chosen.
	jm "$pid" get stats.allocated
	expect_rc 0
}

run_tests
