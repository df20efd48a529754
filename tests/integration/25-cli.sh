#!/bin/bash
# 25-cli.sh -- no surprises on the command line: several PIDs, partial `get`,
# help that never touches a process, `-o -` as standard output.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

t_several_pids_run_the_command_on_each() {
	local a b gone
	start_fixture a "$FIXTURES/jemfix"
	start_fixture b "$FIXTURES/jemfix"
	jm "$a" "$b" get opt.narenas
	expect_rc 0
	expect_eq "$OUT" "$a: $(fix "$a" "get u opt.narenas")
$b: $(fix "$b" "get u opt.narenas")"
	# One that cannot be attached does not hide the others; the worst code wins.
	sh -c 'exit 0' & gone=$!
	wait "$gone"
	jm "$a" "$gone" "$b" info
	expect_rc 3
	expect_match "$OUT" "(^|"$'\n'")$a: process +$a "
	expect_match "$OUT" $'\n'"$b: process +$b "
	expect_match "$ERR" "^$gone: jemattach: no such process $gone"
	# What cannot be split per process is refused before any is touched.
	jm "$a" "$b" watch -n 1
	expect_rc 2
	expect_match "$ERR" "one watch per process"
	jm "$a" "$b" stats -o "$TMPD/one.txt"
	expect_rc 2
	expect_match "$ERR" "-o names one file"
	[[ ! -e $TMPD/one.txt ]] || fail "stats wrote $TMPD/one.txt"
	expect_eq "$(fix "$a" ping)" pong
	expect_eq "$(fix "$b" ping)" pong
}

t_get_prints_what_was_read_and_names_the_bad_one() {
	local pid n lg
	start_fixture pid "$FIXTURES/jemfix"
	n=$(fix "$pid" "get u opt.narenas"); lg=$(fix "$pid" "get z opt.lg_prof_sample")
	jm "$pid" get opt.narenas bad.name opt.lg_prof_sample
	expect_rc 1
	expect_eq "$OUT" "opt.narenas $n
opt.lg_prof_sample $lg"
	expect_match "$ERR" 'mallctl\("bad.name"\): ENOENT'
	jm "$pid" get --json opt.narenas bad.name opt.lg_prof_sample
	expect_rc 1
	expect_eq "$(jq -c . <<<"$OUT" | jq -r '."opt.narenas", ."opt.lg_prof_sample"' | tr '\n' ' ')" "$n $lg "
	expect_match "$(jq -r '.errors."bad.name"' <<<"$OUT")" 'ENOENT'
	expect_eq "$(fix "$pid" ping)" pong
}

t_help_never_touches_a_process() {
	local cmd
	# 999999999 is no process: any attempt to attach would exit 3.
	for cmd in info get set stats prof purge decay threads watch; do
		jm 999999999 "$cmd" --help
		expect_rc 0
		expect_match "$OUT" "^usage: jemattach PID $cmd"
		jm help "$cmd"
		expect_rc 0
		expect_match "$OUT" "^usage: jemattach PID $cmd"
	done
	for cmd in report analyze; do
		jm "$cmd" --help
		expect_rc 0
		expect_match "$OUT" "^usage: jemattach $cmd"
	done
	jm help analyze
	expect_match "$OUT" "--list-folds"
	jm prof on
	expect_rc 2
	expect_match "$ERR" "prof needs a process"
	jm help frobnicate
	expect_rc 2
}

t_analyze_output_dash_is_stdout() {
	local pid
	start_fixture pid "$FIXTURES/heapsites" MALLOC_CONF=prof:true,lg_prof_sample:14
	fix "$pid" "big 4" >/dev/null
	[[ $(fix "$pid" "dump $TMPD/o.heap") == ok ]] || fail "the fixture could not dump"
	mkdir "$TMPD/cwd"
	OUT=$(cd "$TMPD/cwd" && "$JEMATTACH" analyze "$TMPD/o.heap" -o - --top 1) || fail "analyze -o - failed"
	expect_match "$OUT" '^Total: '
	[[ ! -e $TMPD/cwd/- ]] || fail "analyze -o - wrote a file named -"
}

# until_state PID STATE: wait (up to 5 s) for the process to be in STATE.
until_state() {
	for _ in $(seq 250); do
		[[ $(awk '{ print $3 }' "/proc/$1/stat") == "$2" ]] && return 0
		sleep 0.02
	done
	fail "process $1 never reached state $2"
}

# A sleep stopped and continued sleeps on in restart_syscall (219 on x86_64).
t_threads_names_every_syscall() {
	local sp
	start_bg sp sleep 60
	wait_exe "$sp" sleep
	until_state "$sp" S
	kill -STOP "$sp"; until_state "$sp" T
	kill -CONT "$sp"; until_state "$sp" S
	[[ $(awk '{ print $1 }' "/proc/$sp/syscall") == 219 ]] || fail "sleep is not in restart_syscall"
	jm "$sp" threads
	expect_rc 0
	expect_match "$OUT" "^TID $sp \\(sleep\\) asleep in restart_syscall"$'\n'
	jm "$sp" threads --json
	expect_eq "$(jq -r '.[0] | .syscall + " / " + .activity' <<<"$OUT")" "restart_syscall / asleep in restart_syscall"
}

# Started through a link of another name (as Debian's redis-server is a link
# to redis-check-rdb): the executable's real name is shown too.
t_threads_shows_the_real_executable() {
	local pid
	mkdir "$TMPD/bin"
	ln -s "$(readlink -f "$FIXTURES/jemfix")" "$TMPD/bin/othername"
	start_fixture_cmd pid "$TMPD/bin/othername"
	wait_syscall "$pid" "$(sysnr read)"
	jm "$pid" threads
	expect_rc 0
	expect_match "$OUT" "^process $pid \\(othername\\) runs $(readlink -f "$FIXTURES/jemfix")"$'\n'"TID $pid \\(othername\\) asleep in read"
	jm "$pid" threads --json
	expect_eq "$(jq '[.[].frames[] | select(.func == null and .off != null)] | length' <<<"$OUT")" 0
}

# A stripped program's functions are named by where their FDE says they
# start, as analyze names them: main is fn_0x<main's address>, never ??.
t_threads_names_stripped_code_by_function() {
	local pid main
	strip -o "$TMPD/stripped" "$FIXTURES/jemfix"
	main=$(nm "$FIXTURES/jemfix" | awk '$3 == "main" { sub(/^0+/, "", $1); print $1 }')
	start_fixture_cmd pid "$TMPD/stripped"
	wait_syscall "$pid" "$(sysnr read)"
	jm "$pid" threads
	expect_rc 0
	expect_match "$OUT" "fn_0x$main\+0x[0-9a-f]+ \(stripped\)"
	[[ $OUT != *"?? (stripped)"* ]] || fail "an unnamed frame in: $OUT"
}

# A thread stopped inside the vDSO (clock_gettime) is walked with the vDSO's
# own unwind rules: its caller is found, not a frame-pointer guess (which
# named a data symbol and, in the lock check, could end "complete" on garbage
# and miss a jemalloc frame).
t_threads_walks_out_of_the_vdso() {
	local pid i
	start_fixture_cmd pid "$FIXTURES/clockspin"
	for i in 1 2 3 4 5; do
		jm "$pid" threads
		expect_rc 0
		# The caller, then its caller: the walk went on from there.
		grep -A1 ' spin_on_the_clock+0x[0-9a-f]* (clockspin)' <<<"$OUT" | grep -q ' main+' ||
			fail "no spin_on_the_clock then main in: $OUT"
	done
}

t_watch_says_the_process_exited() {
	local pid wpid rc=0 n
	for count in "" 1000; do
		rm -f "$TMPD/w.jsonl"
		start_fixture pid "$FIXTURES/jemfix"
		start_bg wpid "$JEMATTACH" "$pid" watch -i 0.1 ${count:+-n $count} -o "$TMPD/w.jsonl" 2>"$TMPD/w.err"
		for _ in $(seq 250); do [[ $(wc -l <"$TMPD/w.jsonl" 2>/dev/null) -ge 3 ]] && break; sleep 0.02; done
		echo exit >&"${FIX_IN[$pid]}"	# no answer: it exits
		rc=0; wait "$wpid" || rc=$?
		[[ -e $TMPD/w.jsonl ]] || fail "no series (exit $rc): $(cat "$TMPD/w.err")"
		n=$(wc -l <"$TMPD/w.jsonl")
		(( n >= 3 )) || fail "only $n samples"
		jq -e . "$TMPD/w.jsonl" >/dev/null || fail "the series is not whole"
		if [[ -z $count ]]; then
			expect_eq "$rc" 0
			expect_eq "$(cat "$TMPD/w.err")" "jemattach: process $pid exited; $n samples written"
		else
			expect_eq "$rc" 1
			expect_eq "$(cat "$TMPD/w.err")" "jemattach: process $pid exited after $n of 1000 samples"
		fi
	done
}

# The CLI stays a thin layer over the library (issue 32): no function in src/cli
# longer than 60 lines.
t_cli_functions_are_at_most_60_lines() {
	local out
	out=$(scripts/funclen.sh -max 60 src/cli/*.c) || fail "longest in src/cli: $(head -1 <<<"$out")"
	[ -n "$out" ] || fail "funclen.sh measured no function"
}
run_tests
