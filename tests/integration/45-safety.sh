#!/bin/bash
# 45-safety.sh -- the target is never made worse: thread choice, stopped and
# dying targets, signals, syscall restart, our own signals, seccomp, containers,
# timeouts on a held lock, --freeze, threads.
source tests/lib.sh

PROF=MALLOC_CONF=prof:true,prof_active:false

state_of() { awk '{print $3}' "/proc/$1/stat"; }

# send_one SIG PID: send SIG, then wait until it is no longer pending.
send_one() {
	local bit=$(( 1 << ($(kill -l "$1") - 1) ))
	kill -"$1" "$2"
	for _ in $(seq 2000); do
		(( 0x$(awk '/^ShdPnd/ {print $2}' "/proc/$2/status") & bit )) || return 0
		sleep 0.001
	done
}

t_stopped_target_stays_stopped() {
	local pid sig
	for sig in STOP TSTP; do
		# A process group of its own in our session: SIGTSTP to an orphaned
		# group (ours, under setsid) would be discarded by the kernel.
		start_fixture_cmd pid perl -e 'setpgrp(0, 0); exec @ARGV or die' "$FIXTURES/jemfix"
		kill -"$sig" "$pid"
		for _ in $(seq 100); do [[ $(state_of "$pid") == T ]] && break; sleep 0.02; done
		expect_eq "$(state_of "$pid")" T
		jm "$pid" stats -o /dev/null
		expect_rc 0
		jm "$pid" get stats.allocated
		expect_rc 0
		sleep 0.1
		expect_eq "$(state_of "$pid")" T
		kill -CONT "$pid"
		expect_eq "$(fix "$pid" ping)" pong
		expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
	done
}

t_signals_syscalls_and_timer_survive_borrowing() {
	local pid tids t name tid sent=0 forks=0 check
	start_fixture_cmd pid "$FIXTURES/sigfix" --timer
	tids=$(fix "$pid" tids)
	for t in $tids; do
		name=${t%%=*} tid=${t#*=}
		for i in 1 2 3 4 5; do
			# Signals arrive while the thread is borrowed and blocked.  Each
			# is sent once the previous one has been delivered: two of a
			# standard signal pending at once merge into one, by POSIX.
			( for _ in 1 2 3 4; do send_one USR1 "$pid"; send_one PIPE "$pid"; done ) &
			jm --thread "$tid" "$pid" get stats.allocated
			wait $!
			sent=$((sent + 4))
			expect_rc 0
			expect_eq "$(fix "$pid" "fork 3")" ok
			forks=$((forks + 3))
		done
		jm --thread "$tid" "$pid" stats -o /dev/null
		expect_rc 0
	done
	expect_eq "$(fix "$pid" poke)" ok
	sleep 0.7	# a full nap of the sleeping thread after the last borrow
	check=$(fix "$pid" check)
	expect_eq "$check" "read=1 epoll=1 futex=1 sleep_bad=0 usr1=$sent pipe=$sent reaped=$forks timer_lost=0"
}

t_seccomp_and_mdwe_target_survives() {
	local pid before
	start_fixture_cmd pid "$FIXTURES/sigfix" --seccomp
	grep -q '^Seccomp:[[:space:]]*2' "/proc/$pid/status" || fail "no seccomp filter"
	before=$(proc_state "$pid")
	jm "$pid" get stats.allocated version
	expect_rc 0
	jm "$pid" stats -o /dev/null
	expect_rc 0
	jm "$pid" info
	expect_rc 0
	expect_state "$pid" "$before"
	# No executable mapping appeared: nothing was injected.
	expect_eq "$(grep -c ' r.xp ' "/proc/$pid/maps")" "$(grep -c ' r.xp ' <<<"$before")"
	expect_eq "$(fix "$pid" ping)" pong
}

t_target_killed_during_a_call() {
	local pid jpid rc=0
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	mkfifo "$TMPD/fifo.kill"
	# A fixture thread holds jemalloc's dump lock: our call is sure to be
	# in progress (waiting for it) when the target is killed.
	expect_eq "$(fix "$pid" "dump $TMPD/fifo.kill")" ok
	sleep 0.2
	start_bg jpid "$JEMATTACH" --force --timeout 30 "$pid" prof reset 2>"$TMPD/kerr"
	for _ in $(seq 5000); do
		[[ $(awk '/TracerPid/ {print $2}' "/proc/$pid/status" 2>/dev/null) == "$jpid" ]] && break
	done
	sleep 0.3
	kill -KILL "$pid"
	wait "$jpid" 2>/dev/null || rc=$?
	expect_eq "$rc" 1
	expect_match "$(cat "$TMPD/kerr")" "killed by SIGKILL during the call"
}

t_our_sigterm_restores_the_target_first() {
	local pid jpid rc=0 sig
	for sig in TERM INT HUP; do
		start_fixture pid "$FIXTURES/jemfix" "$PROF"
		mkfifo "$TMPD/fifo.$sig"
		# A fixture thread holds jemalloc's dump lock: our prof reset waits on it.
		expect_eq "$(fix "$pid" "dump $TMPD/fifo.$sig")" ok
		sleep 0.2
		# Background jobs start with SIGINT ignored; give it its default action.
		# --force: past the refusal of a lock holder seen before the call.
		start_bg jpid env --default-signal=INT "$JEMATTACH" --force --timeout 2 "$pid" prof reset
		sleep 0.5
		kill -"$sig" "$jpid"
		# The waiting call is never taken back from inside jemalloc (it
		# could hold a lock): it is left to finish on its own, and the
		# signal does its work at once.  Once the dump lock frees, the call
		# returns and restores the thread through its signal frame.
		rc=0; wait "$jpid" 2>/dev/null || rc=$?
		expect_match "$rc" "^(129|130|143)$"
		cat "$TMPD/fifo.$sig" >/dev/null
		expect_eq "$(fix "$pid" ping)" pong
		expect_eq "$(awk '/^SigBlk/ {print $2}' "/proc/$pid/status")" 0000000000000000
		sleep 0.2
		# The lock was released by its holder; ours was never taken.
		jm "$pid" prof reset
		expect_rc 0
		expect_eq "$(fix "$pid" ping)" pong
	done
}

t_timeout_names_the_lock_holder() {
	local pid before
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	mkfifo "$TMPD/fifo.timeout"
	expect_eq "$(fix "$pid" "dump $TMPD/fifo.timeout")" ok
	sleep 0.2
	# --force calls despite the holder seen beforehand: the call-time path.
	jm --force --timeout 0.5 "$pid" prof reset
	expect_rc 5
	expect_match "$ERR" "warning: calling anyway \(forced\): tid [0-9]+ \(jemfix\) is inside jemalloc and may hold a lock"
	expect_match "$ERR" "did not return within 500 ms; it was blocked in syscall futex"
	expect_match "$ERR" "thread [0-9]+ \(jemfix\) is inside jemalloc"
	expect_match "$ERR" "dumper"
	cat "$TMPD/fifo.timeout" >/dev/null
	sleep 0.2
	jm "$pid" prof reset
	expect_rc 0
	expect_eq "$(fix "$pid" check)" ok
}

# switches PID: every thread's context switches so far.  A thread stopped by
# ptrace, even for a moment, switches; one left asleep does not.
switches() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(awk '/ctxt_switches/ {s += $2} END {print s}' "$t/status")"
	done
}

# wait_creat PID: until a thread of PID sits in creat, as jemalloc's dump
# does on a FIFO nobody reads.
wait_creat() {
	for _ in $(seq 200); do
		grep -qs "^$(sysnr creat) " /proc/"$1"/task/*/syscall && return 0
		sleep 0.02
	done
	fail "no thread of $1 blocked in creat"
}

t_stuck_lock_holder_refused_before_anything_stops() {
	local pid before cmd heap
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	mkfifo "$TMPD/fifo.stuck"
	expect_eq "$(fix "$pid" "dump $TMPD/fifo.stuck")" ok
	wait_creat "$pid"
	wait_syscall "$pid" "$(sysnr read)"
	before=$(switches "$pid")
	for cmd in "get stats.allocated" "prof reset"; do
		jm "$pid" $cmd
		expect_rc 5
		expect_match "$ERR" "^jemattach: refused: tid [0-9]+ \(jemfix\) is inside jemalloc and may hold a lock, in [^ ,]+, asleep in $(sysname creat) for at least [0-9]+ ms; "
		expect_match "$ERR" "\(--force does it anyway; --emulate reads the numbers from a copy of the process, calling nothing and taking no lock\):"
		expect_match "$ERR" "dumper\+0x[0-9a-f]+ \(jemfix\)"
		# One message: a line, then the holder's backtrace.
		expect_eq "$(grep -vc '^    #' <<<"$ERR")" 1
	done
	# No thread was stopped, not even for a moment.
	expect_eq "$(switches "$pid")" "$before"
	expect_eq "$(awk '/TracerPid/ {print $2}' "/proc/$pid/status")" 0
	expect_eq "$(fix "$pid" ping)" pong
	# The holder finishes its own work normally once the FIFO is read...
	heap=$(cat "$TMPD/fifo.stuck")
	expect_match "$heap" "^heap_v2/"
	expect_match "$heap" "MAPPED_LIBRARIES:"
	# ...and then the same commands go through.
	sleep 0.2
	jm "$pid" get stats.allocated
	expect_rc 0
	expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
	jm "$pid" prof reset
	expect_rc 0
	expect_eq "$(fix "$pid" check)" ok
}

# A program still starting: its main thread sits in a constructor the
# dynamic loader runs (here a preloaded one, waiting; in make check's exec
# test an ifunc resolver or jemalloc's own initialisation holding its lock).
# The loader on its stack rules the thread out: calling there could meet
# unrelocated code or a lock the thread itself holds.
t_program_still_starting_is_not_called() {
	local pid before
	start_fixture_cmd pid env LD_PRELOAD="$FIXTURES/libctorwait.so" "$FIXTURES/jemfix"
	wait_syscall "$pid" "$(sysnr pause)"
	before=$(proc_state "$pid")
	jm "$pid" get version
	expect_rc 5
	expect_match "$ERR" "^jemattach: no thread of process $pid is safe to use; last: tid $pid \(jemfix\) is inside the dynamic loader \((call_init|fn_0x[0-9a-f]+)\+0x[0-9a-f]+ \(ld-linux-[-a-z0-9_]+\.so\.[0-9]\)\)"
	expect_eq "$(cut -d' ' -f1 "/proc/$pid/syscall")" "$(sysnr pause)"
	expect_state "$pid" "$before"
}

t_no_refusal_on_background_or_busy_threads() {
	local pid i
	# jemalloc's background thread sleeps inside jemalloc in a condition wait.
	start_fixture pid "$FIXTURES/jemfix" MALLOC_CONF=background_thread:true
	fix "$pid" "alloc 100 100000" >/dev/null
	for _ in $(seq 100); do grep -q jemalloc_bg_thd /proc/"$pid"/task/*/comm 2>/dev/null && break; sleep 0.05; done
	grep -q jemalloc_bg_thd /proc/"$pid"/task/*/comm || fail "no background thread"
	for i in $(seq 20); do
		jm "$pid" get stats.allocated
		expect_rc 0
		[[ $ERR != *"may hold a lock"* ]] || fail "run $i: $ERR"
	done
	# Threads allocating and freeing without pause (and purging: madvise,
	# munmap), with background threads too.
	start_fixture_cmd pid env MALLOC_CONF=background_thread:true,dirty_decay_ms:0 "$FIXTURES/stressfix" 4
	for i in $(seq 20); do
		jm "$pid" get stats.allocated
		expect_rc 0
		[[ $ERR != *"may hold a lock"* ]] || fail "run $i: $ERR"
	done
	expect_match "$(fix "$pid" status)" " errors=0$"
}

t_freeze_snapshot_and_refusal() {
	local pid states
	start_fixture pid "$FIXTURES/jemfix"
	expect_eq "$(fix "$pid" "threads 6")" ok
	jm --freeze "$pid" get stats.allocated
	expect_rc 0
	expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
	states=$(for t in /proc/"$pid"/task/*; do awk '{print $3}' "$t/stat"; done | sort -u | tr -d '\n')
	[[ $states != *t* && $states != *T* ]] || fail "threads left stopped: $states"
	# jemalloc's background thread sleeps inside jemalloc, in
	# pthread_cond_timedwait, holding no lock: no reason to refuse.
	start_fixture pid "$FIXTURES/jemfix" "$PROF",background_thread:true
	fix "$pid" "alloc 100 100000" >/dev/null
	for _ in $(seq 100); do grep -q jemalloc_bg_thd /proc/"$pid"/task/*/comm 2>/dev/null && break; sleep 0.05; done
	jm -v --freeze "$pid" get stats.allocated
	expect_rc 0
	expect_match "$ERR" "every thread stopped for [0-9.]+ ms"
	# A thread inside jemalloc that may hold a lock (the dump lock, here)
	# makes --freeze refuse, naming it.
	mkfifo "$TMPD/fifo.freeze"
	expect_eq "$(fix "$pid" "dump $TMPD/fifo.freeze")" ok
	sleep 0.2
	# Seen stuck there before anything is stopped: one message style for both.
	jm --freeze "$pid" get stats.allocated
	expect_rc 5
	expect_match "$ERR" "freeze refused: tid [0-9]+ \(jemfix\) is inside jemalloc and may hold a lock, in [^ ,]+, asleep in $(sysname creat) for at least [0-9]+ ms; a call would wait for that lock \(--force does it anyway; --emulate "
	cat "$TMPD/fifo.freeze" >/dev/null
	expect_eq "$(fix "$pid" ping)" pong
}

t_threads_shows_every_thread() {
	local pid n
	start_fixture pid "$FIXTURES/jemfix" MALLOC_CONF=background_thread:true
	expect_eq "$(fix "$pid" "threads 3")" ok
	fix "$pid" "alloc 100 100000" >/dev/null
	for _ in $(seq 100); do grep -q jemalloc_bg_thd /proc/"$pid"/task/*/comm 2>/dev/null && break; sleep 0.05; done
	jm "$pid" threads --json
	expect_rc 0
	n=$(ls /proc/"$pid"/task | wc -l)
	expect_eq "$(jq length <<<"$OUT")" "$n"
	expect_eq "$(jq -r '.[] | select(.tid == '"$pid"') | .syscall' <<<"$OUT")" read
	expect_eq "$(jq -r '.[] | select(.comm == "jemalloc_bg_thd") | .in_jemalloc' <<<"$OUT")" true
	jq -e '.[] | select(.tid == '"$pid"') | .frames[] | select(.func == "main")' <<<"$OUT" >/dev/null || fail "no main frame"
	jq -e '[.[] | .frames[] | select(.file != null)] | length > 0' <<<"$OUT" >/dev/null || fail "no file:line anywhere"
	jm "$pid" threads
	expect_rc 0
	expect_match "$OUT" "INSIDE JEMALLOC"
	expect_match "$OUT" "main\+0x[0-9a-f]+ \(jemfix\) .*jemfix\.c:[0-9]+"
	# Works on any process, jemalloc or not.
	local sp
	start_bg sp sleep 60
	wait_exe "$sp" sleep
	jm "$sp" threads
	expect_rc 0
	expect_match "$OUT" "TID $sp \(sleep\)"
	expect_eq "$(state_of "$sp")" S
}

t_private_tmp_in_a_mount_namespace() {
	local pid
	# The fixture is copied into the private /tmp: its own path may be under
	# the /tmp the new mount hides.
	start_fixture_cmd pid unshare --mount --propagation private sh -c \
		'exec 3<"$0" && mount -t tmpfs jemattach-test /tmp && cat <&3 >/tmp/jemfix &&
		 chmod +x /tmp/jemfix && exec 3<&- && exec env '"$PROF"' /tmp/jemfix' "$FIXTURES/jemfix"
	jm "$pid" prof dump -o "$TMPD/ns.heap"
	expect_rc 0
	expect_match "$(head -1 "$TMPD/ns.heap")" "^heap_v2/"
	expect_eq "$(ls /tmp | grep -c "^jemattach\.$pid\.")" 0
	expect_eq "$(ls /proc/"$pid"/root/tmp)" jemfix
}

t_read_only_root_is_a_clear_error() {
	local pid
	start_fixture_cmd pid unshare --mount --propagation private sh -c \
		'for d in / /tmp /var/tmp /dev/shm; do mount -o bind,remount,ro "$d" 2>/dev/null || { mount --bind "$d" "$d" && mount -o bind,remount,ro "$d"; }; done; exec env '"$PROF"' "$0"' "$FIXTURES/jemfix"
	jm "$pid" prof dump -o "$TMPD/ro.heap"
	expect_rc 1
	expect_match "$ERR" "has no directory it can write the dump to"
	[[ ! -e $TMPD/ro.heap ]] || fail "a file was written"
	expect_eq "$(fix "$pid" ping)" pong
}

run_tests
