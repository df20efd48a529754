#!/bin/bash
# 48-concurrent.sh -- several jemattach on one process wait for each other
# instead of failing with a wrong "permission denied" (issue 17 row 9).
# runner: light (beside a long file: no clock in its assertions)
. "$(dirname "$0")/../lib.sh"

t_parallel_runs_wait_for_each_other() {
	local pid i p fails=0 pids=()
	start_fixture pid "$FIXTURES/jemfix"
	for round in 1 2 3; do
		pids=()
		for i in 1 2 3 4 5 6; do
			start_bg p "$JEMATTACH" "$pid" stats --opts gmdablxeh 2>"$TMPD/err.$round.$i"
			pids+=("$p")
		done
		i=0
		for p in "${pids[@]}"; do
			i=$((i + 1))
			wait "$p" || { fails=$((fails + 1)); echo "    $(cat "$TMPD/err.$round.$i")" >&2; }
		done
	done
	expect_eq "$fails" 0
	expect_eq "$(fix "$pid" ping)" pong
}

t_a_foreign_tracer_is_named_not_permissions() {
	local pid spid
	command -v gdb >/dev/null || skip "no gdb"
	start_fixture pid "$FIXTURES/jemfix"
	start_bg spid gdb -q -nx -batch -p "$pid" -ex 'shell sleep 3' >/dev/null 2>&1
	for _ in $(seq 200); do
		[[ $(awk '/TracerPid/ {print $2}' "/proc/$pid/status") != 0 ]] && break
		sleep 0.02
	done
	jm "$pid" get version
	expect_rc 3
	expect_match "$ERR" "already traced by process [0-9]+ \(gdb\)"
	[[ ! $ERR =~ permission ]] || fail "blames permissions: $ERR"
	wait "$spid" || :
}

run_tests
