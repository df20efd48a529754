#!/bin/bash
# 47-exec.sh -- a process that exec()s while jemattach works on it: never a
# call to the old program's addresses (issue 17 row 10).
. "$(dirname "$0")/../lib.sh"

# exec_loop [WRAPPER...]: 30 gets on a fixture that keeps exec'ing itself.
exec_loop() {
	local pid i rc3=0
	start_fixture_cmd pid "$@" "$FIXTURES/execloop" 100000
	for i in $(seq 30); do
		jm "$pid" get version
		case $RC in
		0) expect_match "$OUT" "^5\." ;;
		3) expect_match "$ERR" "process $pid (executed a new program|exited)"; rc3=$((rc3 + 1)) ;;
		*) fail "run $i: exit $RC: $ERR" ;;
		esac
	done
	# The process survived every run: still there, still exec'ing.
	kill -0 "$pid" || fail "process $pid died"
	[[ $(awk '{print $3}' "/proc/$pid/stat") != Z ]] || fail "process $pid died"
	echo "    ($rc3 of 30 runs met an exec)"
}

t_exec_between_open_and_call_is_exit_3() {
	exec_loop
}

# Without address-space randomization the vDSO does not move at exec: the
# check falls back to the maps.
t_exec_without_aslr_is_exit_3() {
	exec_loop setarch -R
}

run_tests
