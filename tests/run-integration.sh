#!/bin/bash
# run-integration.sh -- run tests/integration/*.sh, each in its own process group.
# Usage: run-integration.sh [PATTERN]   (env: JEMATTACH, FIXTURES, and
# SKIP: a pattern of test files not to run; ONLY: run only the tests whose
# FILE/NAME contains it)
set -u
source tests/procs.sh
pass=0 fail=0 skipped=0
for f in tests/integration/*.sh; do
	[[ -n ${1:-} && $f != *$1* ]] && continue
	[[ -n ${SKIP:-} && $f == *$SKIP* ]] && { echo "not run (SKIP=$SKIP): $f"; continue; }
	out=$(mktemp)
	t0=$SECONDS
	# setsid: a group of our own, so anything the test leaves behind is ours to reap.
	setsid -w bash "$f" >"$out" 2>&1 &
	pgid=$!
	wait "$pgid"
	# Each test's processes are stopped at its end (lib.sh); anything still in
	# the session the script led is a leak: a failure, then killed.
	left=$(session_procs "$pgid")
	[[ -n $left ]] && { sleep 1; left=$(session_procs "$pgid"); }
	kill -KILL -- "-$pgid" 2>/dev/null
	cat "$out"
	if [[ -n $left ]]; then
		echo "FAILED $f: left running after it ended: $(awk '{printf "%s (%s) ", $1, $3}' <<<"$left")"
		fail=$((fail + 1))
		kill -KILL $(awk '{print $1}' <<<"$left") 2>/dev/null
	fi
	echo "  ($f: $((SECONDS - t0)) s)"
	read -r p f_ s_ < <(awk '/^RESULT/ {print $2, $3, ($4 == "" ? 0 : $4)}' "$out")
	if [[ -z ${p:-} ]]; then
		echo "FAILED $f (no result: the script died)"; fail=$((fail + 1))
	else
		pass=$((pass + p)); fail=$((fail + f_)); skipped=$((skipped + s_))
	fi
	rm -f "$out"
done
echo "integration: $pass passed, $fail failed, $skipped skipped"
[[ $fail == 0 ]]
