#!/bin/bash
# 37-shell.sh -- `jemattach PID shell`: many commands in one session, values
# checked against the target's own, errors reported line by line.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

t_shell_runs_each_line_against_the_target() {
	local pid before
	start_fixture pid "$FIXTURES/jemfix"
	fix "$pid" "alloc 1000 1000" >/dev/null
	before=$(proc_state "$pid")
	printf '%s\n' "get stats.allocated" "# a comment" "" "bogus" \
		"get 'opt.narenas' arenas.page" >"$TMPD/script"
	jm "$pid" shell "$TMPD/script"
	# A bad line is reported and the next ones still run; the exit code is
	# that of the last failure (usage).
	expect_rc 2
	expect_match "$ERR" 'unknown command "bogus"'
	expect_eq "$(sed -n 1p <<<"$OUT")" "$(fix "$pid" "get z stats.allocated")"
	expect_eq "$(sed -n 2p <<<"$OUT")" "opt.narenas $(fix "$pid" "get u opt.narenas")"
	expect_eq "$(sed -n 3p <<<"$OUT")" "arenas.page $(fix "$pid" "get z arenas.page")"
	expect_state "$pid" "$before"
	expect_eq "$(fix "$pid" check)" ok
}

t_shell_finds_jemalloc_once_and_stops_once_per_command() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	jm -v "$pid" - <<<$'get stats.allocated\nget stats.active\nset prof.gdump false\nget version'
	expect_rc 1	# prof.gdump: ENOENT, the fixture runs without profiling
	expect_eq "$(grep -c 'jemalloc in ' <<<"$ERR")" 1
	# One stop per command that reaches the target, each reported with its hold.
	expect_eq "$(grep -c 'held for [0-9.]* ms$' <<<"$ERR")" 4
	expect_eq "$(tail -1 <<<"$OUT")" "$(fix "$pid" "get s version")"
}

t_shell_usage_errors() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	jm "$pid" shell a b
	expect_rc 2
	jm "$pid" shell "$TMPD/no-such-script"
	expect_rc 2
	expect_match "$ERR" 'cannot read'
	jm "$pid" - <<<"get \"unclosed"
	expect_rc 2
	expect_match "$ERR" 'unclosed quote'
}

run_tests
