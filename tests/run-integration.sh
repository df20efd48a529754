#!/bin/bash
# run-integration.sh -- run tests/integration/*.sh, each in its own session
# and process group.
# Usage: run-integration.sh [PATTERN]   (env: JEMATTACH, FIXTURES, and
# SKIP: a pattern of test files not to run; ONLY: run only the tests whose
# FILE/NAME contains it; SERIAL=1: one file at a time)
#
# Files run one at a time, in order, but for one overlap: the file with a
# "# runner: long" line (65-sampler: mostly waiting out its sampling windows,
# on a target that keeps its rate by the clock) starts first, in the
# background, and the files with a "# runner: light" line (short, no clock or
# timeout in what they assert) run beside it, one at a time; every other file
# runs alone after them.  Each file's line gives its seconds and CPU seconds.
set -u
source tests/procs.sh
pass=0 fail=0 skipped=0
declare -A PGID T0 OUT

# tag FILE: the word of FILE's "# runner: WORD" line.
tag() { sed -n 's/^# runner: \([a-z]*\).*/\1/p' "$1" | head -1; }

# start FILE: run it in the background; setsid: a session and group of its
# own, so anything it leaves behind is ours to find and reap.
start() {
	OUT[$1]=$(mktemp)
	T0[$1]=$SECONDS
	setsid -w bash "$1" >"${OUT[$1]}" 2>&1 &
	PGID[$1]=$!
}

# finish FILE: wait for it, print its output and add up its result.
finish() {
	local f=$1 pgid=${PGID[$1]} out=${OUT[$1]} left p f_ s_ cpu
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
	# lib.sh's count: the script's and everything it waited for.
	cpu=$(awk '/^CPU [0-9]+$/ {print $2}' "$out")
	cpu=${cpu:+, CPU $((cpu / 1000)).$((cpu % 1000 / 100)) s}
	echo "  ($f: $((SECONDS - T0[$f])) s$cpu)"
	read -r p f_ s_ < <(awk '/^RESULT/ {print $2, $3, ($4 == "" ? 0 : $4)}' "$out")
	if [[ -z ${p:-} ]]; then
		echo "FAILED $f (no result: the script died)"; fail=$((fail + 1))
	else
		pass=$((pass + p)); fail=$((fail + f_)); skipped=$((skipped + s_))
	fi
	rm -f "$out"
}

files=() long="" light=()
for f in tests/integration/*.sh; do
	[[ -n ${1:-} && $f != *$1* ]] && continue
	[[ -n ${SKIP:-} && $f == *$SKIP* ]] && { echo "not run (SKIP=$SKIP): $f"; continue; }
	files+=("$f")
	case $(tag "$f") in
	long) [[ -z $long ]] && long=$f ;;
	light) light+=("$f") ;;
	esac
done
declare -A done_
if [[ -n $long && ${SERIAL:-0} != 1 && ${#light[@]} -gt 0 ]]; then
	echo "  ($long runs beside: ${light[*]##*/})"
	start "$long"
	for f in "${light[@]}"; do start "$f"; finish "$f"; done_[$f]=1; done
	finish "$long"; done_[$long]=1
fi
for f in "${files[@]}"; do
	[[ -n ${done_[$f]:-} ]] && continue
	start "$f"; finish "$f"
done
echo "integration: $pass passed, $fail failed, $skipped skipped"
[[ $fail == 0 ]]
