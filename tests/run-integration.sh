#!/bin/bash
# run-integration.sh -- run tests/integration/*.sh, each in its own session
# and process group.
# Usage: run-integration.sh [PATTERN]   (env: JEMATTACH, FIXTURES, and
# SKIP: a pattern of test files not to run; ONLY: run only the tests whose
# FILE/NAME contains it; SERIAL=1: one file at a time; JEMATTACH_TOOL: the
# tool the files with a "# build: tool" line run instead of $JEMATTACH)
#
# Two lanes first, side by side: the files with a "# runner: long" line
# (mostly waiting, on sampling windows, rates, --every; 65-sampler,
# 77-serve-hostile, 87-census-grow) one after another in one, and the files
# with a "# runner: light" line (no clock in what they assert) one after
# another in the other.  A long file so has at most one light file beside it,
# never another long one.  Every other file then runs alone.  Each file's
# line gives its seconds and CPU seconds.
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
	local tool=${JEMATTACH:-}	# unset: lib.sh's default
	[[ -n ${JEMATTACH_TOOL:-} && $(sed -n 's/^# build: \([a-z]*\).*/\1/p' "$1") == tool ]] &&
		tool=$JEMATTACH_TOOL
	env ${tool:+JEMATTACH="$tool"} setsid -w bash "$1" >"${OUT[$1]}" 2>&1 &
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

# lanes: the long files one after another, the light ones one after another,
# the two lanes side by side.
lanes() {
	local -A running=()	# PGID -> file
	local i=0 j=0 f ended
	while :; do
		if ((i < ${#long[@]})) && [[ -z ${lane_long:-} ]]; then
			f=${long[i++]}; start "$f"; running[${PGID[$f]}]=$f; lane_long=$f
		fi
		if ((j < ${#light[@]})) && [[ -z ${lane_light:-} ]]; then
			f=${light[j++]}; start "$f"; running[${PGID[$f]}]=$f; lane_light=$f
		fi
		((${#running[@]})) || break
		wait -n -p ended "${!running[@]}"
		f=${running[$ended]}
		unset "running[$ended]"
		[[ $f == "${lane_long:-}" ]] && lane_long=""
		[[ $f == "${lane_light:-}" ]] && lane_light=""
		finish "$f"
		done_[$f]=1
	done
}

files=() long=() light=()
for f in tests/integration/*.sh; do
	[[ -n ${1:-} && $f != *$1* ]] && continue
	[[ -n ${SKIP:-} && $f == *$SKIP* ]] && { echo "not run (SKIP=$SKIP): $f"; continue; }
	files+=("$f")
	case $(tag "$f") in
	long) long+=("$f") ;;
	light) light+=("$f") ;;
	esac
done
declare -A done_
if [[ ${SERIAL:-0} != 1 && ${#long[@]} -gt 0 && ${#light[@]} -gt 0 ]]; then
	echo "  (side by side: ${long[*]##*/} | ${light[*]##*/})"
	lanes
fi
for f in "${files[@]}"; do
	[[ -n ${done_[$f]:-} ]] && continue
	start "$f"; finish "$f"
done
echo "integration: $pass passed, $fail failed, $skipped skipped"
[[ $fail == 0 ]]
