# lib.sh -- helpers for integration tests.  Source it, define t_* functions, call run_tests.
#
# Every test script runs in its own process group (tests/run-integration.sh
# starts it with setsid).  Processes are started only through start_* below,
# which records them; cleanup kills exactly those, waits for them and removes
# the scratch directory -- on success, failure, or interruption.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/procs.sh"
JEMATTACH=$(readlink -f "${JEMATTACH:-build/jemattach}")
FIXTURES=$(readlink -f "${FIXTURES:-build/fixtures}")
TMPD=$(mktemp -d /tmp/jemattach-test.XXXXXX)
# jemattach keeps what it found about a program under $XDG_CACHE_HOME: a
# script's own, so each starts without one and leaves nothing behind.
export XDG_CACHE_HOME=$TMPD/cache
STARTED=()
declare -A FIX_IN FIX_OUT
T_PASS=0 T_FAIL=0 T_SKIP=0 T_CUR=""

# child_state PID: CHILD_STATE = PID's state letter (R, S, Z...) while it is
# a child of this shell, not yet waited for; empty once it is not: a PID
# waited for (a test may wait itself) is given back, maybe to a process of
# someone else's, which must not be signalled.  No $(...): $BASHPID is ours.
child_state() {
	local st s pp
	CHILD_STATE=
	read -r st 2>/dev/null <"/proc/$1/stat" || return 0
	read -r s pp _ <<<"${st##*) }"
	[[ $pp == "$BASHPID" ]] && CHILD_STATE=$s
	return 0
}

# reap_started [FROM]: stop the processes recorded in STARTED from index FROM
# on (default 0) that are still ours, TERM then KILL after 2.5 s, wait for
# them and forget them all.
reap_started() {
	local from=${1:-0} p
	local -a live=()
	for p in "${STARTED[@]:$from}"; do
		child_state "$p"
		[[ -n $CHILD_STATE ]] || continue
		live+=("$p")
		kill -CONT "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${live[@]}"; do
		for _ in $(seq 50); do
			child_state "$p"
			[[ $CHILD_STATE == Z || -z $CHILD_STATE ]] && break
			sleep 0.05
		done
		[[ $CHILD_STATE == Z || -z $CHILD_STATE ]] || kill -KILL "$p" 2>/dev/null
		{ wait "$p"; } 2>/dev/null
	done
	STARTED=("${STARTED[@]:0:$from}")
}

cleanup() {
	reap_started
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "    $T_CUR: $*" >&2; return 1; }
# skip REASON: end the current test as skipped (never counted as passed):
# `have_gdb || skip "no gdb"`.  Exit status 77, as automake's harness uses.
skip() { echo "    $T_CUR: skipped: $*" >&2; exit 77; }

# start_fixture VAR BINARY [ENV=VALUE...]: start a line-protocol fixture (jemfix,
# callee) in a fresh empty working directory; its pid goes into $VAR.
start_fixture() {
	local __var=$1 __bin; __bin=$(readlink -f "$2"); shift 2
	start_fixture_cmd "$__var" env "$@" "$__bin"
}

# start_fixture_cmd VAR CMD...: the same for any command line that ends by
# exec'ing a fixture (under unshare, with arguments...).
start_fixture_cmd() {
	local __var=$1; shift
	local __dir; __dir=$(mktemp -d "$TMPD/fix.XXXX")
	mkfifo "$__dir/in" "$__dir/out"
	mkdir "$__dir/cwd"
	(cd "$__dir/cwd" && exec "$@" <"$__dir/in" >"$__dir/out") &
	local __pid=$! __in __out __line=""
	STARTED+=("$__pid")
	exec {__in}>"$__dir/in"
	exec {__out}<"$__dir/out"
	FIX_IN[$__pid]=$__in
	FIX_OUT[$__pid]=$__out
	while read -r -t 30 __line <&"$__out"; do
		[[ $__line == ready ]] && break
	done
	[[ $__line == ready ]] || { fail "fixture $* did not start"; return 1; }
	printf -v "$__var" '%s' "$__pid"
}

# fix PID CMD: send one command, print the one-line answer.
fix() {
	local line
	echo "$2" >&"${FIX_IN[$1]}" || { fail "fixture $1 does not read '$2'"; return 1; }
	read -r -t 60 line <&"${FIX_OUT[$1]}" || { fail "fixture $1 did not answer '$2'"; return 1; }
	echo "$line"
}

# fix_cwd PID: the fixture's working directory (must stay empty).
fix_cwd() { readlink "/proc/$1/cwd"; }

free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 40000))
		(echo >/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}

# start_redis VAR [ENV=VALUE...]: Debian's redis-server on 127.0.0.1, random
# port (in $REDIS_PORT), no persistence, its stderr to $REDIS_STDERR (default
# /dev/null).  A port taken between free_port and
# the bind makes redis exit: another port is tried.  Up to 20 s to answer,
# for a loaded CI machine; a redis that never answers fails the test by name.
start_redis() {
	local __var=$1; shift
	local __port __dir __pid
	for _ in 1 2 3; do
		__port=$(free_port) || { fail "no free port for redis"; return 1; }
		__dir=$(mktemp -d "$TMPD/redis.XXXX")
		env "$@" redis-server --port "$__port" --bind 127.0.0.1 --save '' --appendonly no \
			--enable-debug-command local \
			--dir "$__dir" --logfile "$__dir/log" --daemonize no >/dev/null \
			2>"${REDIS_STDERR:-/dev/null}" &
		__pid=$!
		STARTED+=("$__pid")
		for _ in $(seq 400); do
			[[ $(redis-cli -p "$__port" ping 2>/dev/null) == PONG ]] && break 2
			kill -0 "$__pid" 2>/dev/null || break
			sleep 0.05
		done
		kill -0 "$__pid" 2>/dev/null && break	# alive but silent: no other port helps
	done
	[[ $(redis-cli -p "$__port" ping 2>/dev/null) == PONG ]] ||
		{ fail "redis did not start: $(tail -1 "$__dir/log" 2>/dev/null)"; return 1; }
	REDIS_PORT=$__port
	settle "$__pid"
	printf -v "$__var" '%s' "$__pid"
}

# start_bg VAR CMD...: any other process, recorded for cleanup.  Until it
# execs, it is a copy of this shell: see wait_exe.
start_bg() {
	local __var=$1; shift
	"$@" &
	local __pid=$!
	STARTED+=("$__pid")
	printf -v "$__var" '%s' "$__pid"
}

# need_gdb_calls: skip the test (saying why) when this machine's gdb cannot call
# a function in a process.  Debian 12's gdb 13 writes the XSAVE state back in
# its own 2696-byte layout, and on a CPU with AMX (Intel Sapphire Rapids and
# later: 11008 bytes) the kernel takes only the full size: every `call` ends
# in "Couldn't write extended state status" and the process may die (a
# sleep did: "Unknown error 516").  The probe is a sleep of ours; its answer is
# kept for the file.
need_gdb_calls() {
	local pid out memo=$TMPD/gdb-calls
	if [[ ! -f $memo ]]; then
		start_bg pid sleep 60
		wait_exe "$pid" sleep
		out=$(gdb -p "$pid" -batch -nx -iex "set debuginfod enabled off" \
			-ex 'print (int)getpid()' 2>&1 </dev/null) || true
		kill -KILL "$pid" 2>/dev/null || true	# (it may have died of the probe)
		if [[ $out == *"\$1 = $pid"* ]]; then : >"$memo"
		else grep -m1 -e "Couldn't" -e "rror" <<<"$out" >"$memo" || echo "no answer" >"$memo"; fi
	fi
	[[ -s $memo ]] && skip "this machine's gdb cannot call functions in a process: $(cat "$memo") (doc/gdb.md)"
	return 0
}

# wait_exe PID NAME: until PID runs the program NAME (a slow exec, on a loaded
# machine, would otherwise meet jemattach with the shell still in its place).
wait_exe() {
	for _ in $(seq 200); do
		[[ $(readlink "/proc/$1/exe" 2>/dev/null) == */"$2" ]] && return 0
		sleep 0.05
	done
	fail "process $1 does not run $2"
}

# dump_dirs_since FILE: what prof dump may leave in /tmp (its private
# directories, jemattach.*) made or written since FILE was.
dump_dirs_since() {
	find /tmp -maxdepth 1 -name 'jemattach.*' -newer "$1"
}

# expect_swept PID FILE: one more dump of PID, once every directory a killed or
# signalled dump left is older than the sweep's 2 s, leaves none made since FILE.
expect_swept() {
	sleep 2.2
	jm --timeout 5 "$1" prof dump -o "$TMPD/last.heap"
	expect_rc 0
	expect_eq "$(dump_dirs_since "$2")" ""
}

# settle PID: wait until the process stops changing its mappings and threads
# by itself (start-up work such as jemalloc creating its background threads).
settle() {
	local a b="" i
	for i in $(seq 0 25); do
		a=$b
		b=$(cat "/proc/$1/maps"; ls "/proc/$1/task") || { fail "process $1 is gone"; return 1; }
		((i)) && [[ $a == "$b" ]] && return 0
		sleep 0.2
	done
	return 0
}

# sysnr NAME: the number /proc/PID/syscall shows for a thread in libc's NAME()
# on this machine; sysname NAME: that system call's name, as jemattach says it.
# arm64's generic table has no pause or creat: its libc makes them ppoll and openat.
sysnr() {
	case $(uname -m):$1 in
	x86_64:read) echo 0 ;; x86_64:write) echo 1 ;; x86_64:pause) echo 34 ;;
	x86_64:creat) echo 85 ;; x86_64:restart_syscall) echo 219 ;; x86_64:poll) echo 7 ;;
	x86_64:clock_nanosleep) echo 230 ;;
	aarch64:read) echo 63 ;; aarch64:write) echo 64 ;; aarch64:pause) echo 73 ;;
	aarch64:creat) echo 56 ;; aarch64:restart_syscall) echo 128 ;;
	aarch64:clock_nanosleep) echo 115 ;;
	*) echo "sysnr: no number for $1 on $(uname -m)" >&2; echo -1 ;;
	esac
}
sysname() {
	case $(uname -m):$1 in
	aarch64:pause) echo ppoll ;; aarch64:creat) echo openat ;; *) echo "$1" ;;
	esac
}

# wait_syscall PID NR: until the main thread sits in system call NR (a fixture
# that has just answered may still be returning from its write).
wait_syscall() {
	for _ in $(seq 100); do
		[[ $(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null) == "$2" ]] && return 0
		sleep 0.02
	done
	return 0
}

# What must not change in a target across an attach.
proc_state() {
	local pid=$1
	cat "/proc/$pid/maps"
	for fd in /proc/"$pid"/fd/*; do echo "${fd##*/} $(readlink "$fd")"; done | sort
	ls -A "$(readlink "/proc/$pid/cwd")"
}

# expect_state PID BEFORE: proc_state is back to BEFORE (given a moment for
# the target's own activity to settle); prints only the difference.
expect_state() {
	local now
	for _ in $(seq 20); do
		now=$(proc_state "$1")
		[[ $now == "$2" ]] && return 0
		sleep 0.05
	done
	diff <(echo "$2") <(echo "$now") >&2
	fail "process $1 changed (maps, fds or files in its working directory)"
}

# expect_not_stopped PID: no thread of PID is stopped (t or T in
# /proc/PID/task/*/stat), given a moment for a detach in progress.
expect_not_stopped() {
	local st f l
	for _ in $(seq 40); do
		st=""
		for f in /proc/"$1"/task/*/stat; do
			read -r l 2>/dev/null <"$f" || continue
			l=${l##*) }
			st+=" ${l%% *}"
		done
		[[ $st != *[tT]* ]] && return 0
		sleep 0.05
	done
	fail "process $1 left stopped (thread states: $(echo $st))"
}

# jm ARGS...: run jemattach, stdout in $OUT, stderr in $ERR, exit code in $RC.
jm() { jm_run "$JEMATTACH" "$@"; }

# jm_run CMD...: the same for a command line that runs jemattach (under env,
# in a namespace...).
jm_run() {
	RC=0
	OUT=$("$@" 2>"$TMPD/err") || RC=$?
	ERR=$(cat "$TMPD/err")
	return 0
}

expect_rc() { [[ $RC == "$1" ]] || fail "expected exit $1, got $RC (stderr: $ERR)"; }
expect_eq() { [[ $1 == "$2" ]] || fail "expected '$2', got '$1'"; }
expect_match() { [[ $1 =~ $2 ]] || fail "'$1' does not match /$2/"; }
# within A B TOL: |A - B| <= TOL; A, B and TOL must be integers.
within() {
	local v
	for v in "$1" "$2" "$3"; do
		[[ $v =~ ^-?[0-9]+$ ]] || { fail "within: '$v' is not an integer ($1 vs $2)"; return 1; }
	done
	local d=$(( $1 - $2 )); d=${d#-}
	(( d <= $3 )) || fail "$1 and $2 differ by $d (> $3)"
}

# left_behind: when this script runs as a session leader (run-integration.sh
# starts it so), fail if the session holds a live process that is neither in
# STARTED nor below one of those -- what the test just run left running
# (started in a $(...) subshell, orphaned by a helper...).  Those are killed.
left_behind() {
	[[ $(session_of $$) == "$$" ]] || return 0
	local -A par=() name=() keep=()
	local p pp comm q left try
	for p in "${STARTED[@]}"; do keep[$p]=1; done
	for try in 1 2 3 4 5 6; do	# a process being reaped may take a moment
		par=() name=() left=()
		while read -r p pp comm; do par[$p]=$pp name[$p]=$comm; done < <(session_procs $$)
		for p in "${!par[@]}"; do
			q=$p
			while [[ -z ${keep[$q]:-} && -n ${par[$q]:-} ]]; do q=${par[$q]}; done
			[[ -n ${keep[$q]:-} ]] || left+=("$p")
		done
		((${#left[@]})) || return 0
		sleep 0.25
	done
	echo "    $T_CUR: left running: $(for p in "${left[@]}"; do printf '%s ' "$p (${name[$p]})"; done)" >&2
	kill -KILL "${left[@]}" 2>/dev/null
	return 1
}

run_tests() {
	local t
	for t in $(declare -F | awk '{print $3}' | grep '^t_'); do
		T_CUR="$(basename "$0" .sh)/${t#t_}"
		[[ -n ${ONLY:-} && $T_CUR != *$ONLY* ]] && continue
		# Not "if ( ... )": errexit is ignored inside an if condition, so a
		# failed expectation in the middle of a test would go unnoticed.
		# What the test started is stopped when it ends, passed or not (the
		# subshell does not run the script's EXIT trap).
		local n0=${#STARTED[@]} t0=${EPOCHREALTIME/./}
		( set -e; trap 'rc=$?; set +e; reap_started '"$n0"'; exit $rc' EXIT; "$t" )
		local rc=$?
		left_behind || rc=1
		local took; took=$(( (${EPOCHREALTIME/./} - t0) / 100000 ))
		took="($((took / 10)).$((took % 10)) s)"
		if [[ $rc == 0 ]]; then
			echo "ok     $T_CUR $took"; T_PASS=$((T_PASS + 1))
		elif [[ $rc == 77 ]]; then
			echo "skip   $T_CUR $took"; T_SKIP=$((T_SKIP + 1))
		else
			echo "FAILED $T_CUR $took"; T_FAIL=$((T_FAIL + 1))
		fi
	done
	# The CPU time of this script and all it waited for, in ms, for the
	# runner's line (its own count would mix files run side by side).
	local um us uf sm ss sf cu cs cf dm ds df
	times >"$TMPD/times"
	read -r um us uf sm ss sf < <(sed -n '1s/[ms.]/ /gp' "$TMPD/times")
	read -r cu cs cf dm ds df < <(sed -n '2s/[ms.]/ /gp' "$TMPD/times")
	echo "CPU $(( (10#$um + 10#$sm + 10#$cu + 10#$dm) * 60000 + (10#$us + 10#$ss + 10#$cs + 10#$ds) * 1000 +
		10#$uf + 10#$sf + 10#$cf + 10#$df ))"
	echo "RESULT $T_PASS $T_FAIL $T_SKIP"
}
