#!/bin/bash
# 51-stop.sh -- Ctrl-Z of jemattach in the middle of a call does not leave the
# target's borrowed thread frozen (issue 17 row 8).
# runner: light (beside a long file: no clock in its assertions)
. "$(dirname "$0")/../lib.sh"
PROF="MALLOC_CONF=prof:true,prof_active:true"

state_of() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }
tracer_of() { awk '/TracerPid/ {print $2}' "/proc/$1/status" 2>/dev/null; }

t_sigtstp_mid_call_waits_for_the_thread_to_be_given_back() {
	local pid jpid rc=0
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	mkfifo "$TMPD/fifo"
	# A fixture thread holds jemalloc's dump lock: our call waits for it.
	expect_eq "$(fix "$pid" "dump $TMPD/fifo")" ok
	sleep 0.2
	# In a process group of its own whose parent is in this session: not an
	# orphaned group, so the kernel does stop it on SIGTSTP (as at a terminal).
	# --force: a lock holder seen before the call would be refused otherwise.
	start_bg jpid perl -e 'setpgrp(0, 0); exec @ARGV or die' \
		"$JEMATTACH" --force --timeout 30 "$pid" prof reset
	for _ in $(seq 600); do [[ $(tracer_of "$pid") == "$jpid" ]] && break; sleep 0.05; done
	sleep 0.3
	[[ $(tracer_of "$pid") == "$jpid" ]] || fail "jemattach did not start its call"
	kill -TSTP "$jpid"
	sleep 0.3
	# Held back: jemattach still waits for its call, it is not stopped.
	expect_eq "$(state_of "$jpid")" S
	# The dump lock frees, the call ends, the thread goes back; then the stop.
	cat "$TMPD/fifo" >/dev/null
	for _ in $(seq 100); do [[ $(state_of "$jpid") == T ]] && break; sleep 0.05; done
	expect_eq "$(state_of "$jpid")" T
	expect_eq "$(tracer_of "$pid")" 0
	expect_eq "$(fix "$pid" ping)" pong
	kill -CONT "$jpid"
	wait "$jpid" || rc=$?
	expect_eq "$rc" 0
}

run_tests
