# killrounds.sh -- killing jemattach at random instants of its work on a target, and
# checking the target is as it was.  Source after lib.sh.  Counts in KILLED
# (SIGKILLs sent) and CALLS (seen inside a call when killed).

ALL_BLOCKED=fffffffffffbfeff	# PTRACE_SETSIGMASK ~0: all but SIGKILL and SIGSTOP

# The checks read /proc with bash builtins only: under emulation (the arm64
# guest) starting a process costs up to half a second, and a per-thread awk
# made each round's check take tens of seconds.

# scan PID: MASKS, "TID SIGBLK" of every thread (a line each), ST: ok,
# stopped (a thread in state t or T) or traced (a tracer attached), TRACER:
# a tracer's pid.
scan() {
	local t line st blk
	MASKS="" ST=ok TRACER=0
	for t in /proc/"$1"/task/*; do
		st="" blk=""
		read -r st 2>/dev/null <"$t/stat"
		st=${st##*) }
		[[ ${st%% *} != [tT] ]] || ST=stopped
		while IFS= read -r line; do
			case $line in
			SigBlk:*) blk=${line#SigBlk:} blk=${blk//[[:space:]]/} ;;
			TracerPid:*) line=${line#TracerPid:} line=${line//[[:space:]]/}
				[[ $line == 0 || -z $line ]] || { ST=traced TRACER=$line; } ;;
			esac
		done 2>/dev/null <"$t/status"
		MASKS+="${t##*/} $blk"$'\n'
	done
	MASKS=${MASKS%$'\n'}
}

# masks PID: "TID SIGBLK" of every thread.
masks() { scan "$1"; echo "$MASKS"; }

# stable_masks PID: masks, once two looks in a row agree.  A thread in
# sigtimedwait shows its mask without the signals it waits for, and with them
# between two waits: one look can catch that instant, and intact would then
# wait for it to come back (the victim's v_sigtimedwait: a failed round under
# ASan on x86_64, a soak stalled for minutes in the arm64 guest).
stable_masks() {
	local a b i
	a=$(masks "$1")
	for ((i = 0; i < 100; i++)); do
		b=$(masks "$1")
		[[ $a == "$b" ]] && break
		a=$b
	done
	echo "$a"
}

in_call() { scan "$1"; [[ $'\n'$MASKS$'\n' == *" $ALL_BLOCKED"$'\n'* ]]; }

# nap SECONDS: sleep without starting a process (a read that times out).
nap() {
	if [[ -z ${NAP_FD:-} ]]; then
		[[ -p $TMPD/nap ]] || mkfifo "$TMPD/nap"
		exec {NAP_FD}<>"$TMPD/nap"
	fi
	read -r -t "$1" -u "$NAP_FD" _ || true
}

# intact PID MASKS: alive, no thread stopped or traced, every signal mask as
# before -- given time for a call left running to end and restore itself.
intact() {
	local pid=$1 want=$2 i
	kill -0 "$pid" 2>/dev/null || { fail "target $pid died"; return 1; }
	for ((i = 0; i < 300; i++)); do
		scan "$pid"
		[[ $MASKS == "$want" ]] || ST=masks
		[[ $ST == ok ]] && return 0
		((i % 50 != 49)) || [[ -z ${KR_TRACE:-} ]] ||
			echo "    $(date +%T) waiting: $ST; masks ${MASKS//$'\n'/ }" >&2
		nap 0.01
	done
	fail "target $pid: $ST; masks now: ${MASKS//$'\n'/ } wanted: ${want//$'\n'/ }"
}

# kill_rounds PID N OPS THREADS...: N runs of jemattach, each killed at a
# random instant, each one of OPS ("get stats json dump freeze"), with
# --thread one of THREADS ("-": its own choice).  KR_BEFORE, when set, is a
# command run before each (to put the target in some state); KR_AFTER one
# run after each check of the target (more checks), with the round number.
# KR_IN_CALL=1: every kill aimed inside a call (else 5 rounds of 8).
# KR_TRACE=1: a line per round, and what intact waits for.  KR_MASKS: the
# masks to find after each round (default: as they are at the start).
kill_rounds() {
	local pid=$1 n=$2 i k jpid rc args opts tid mode before hit
	local ops=($3)
	shift 3
	local tids=("$@")
	before=${KR_MASKS:-$(stable_masks "$pid")}
	for ((i = 0; i < n; i++)); do
		[[ -z ${KR_BEFORE:-} ]] || $KR_BEFORE "$pid"
		opts=(--timeout 10)
		case ${ops[RANDOM % ${#ops[@]}]} in
		get) args=(get stats.allocated) ;;
		stats) args=(stats -o "$TMPD/s.txt") ;;
		json) args=(stats --json -o "$TMPD/s.json") ;;
		dump) args=(prof dump -o "$TMPD/d.heap") ;;
		freeze) args=(stats -o "$TMPD/f.txt") opts+=(--freeze) ;;
		esac
		tid=${tids[RANDOM % ${#tids[@]}]}
		[[ $tid == - ]] || opts+=(--thread "$tid")
		mode=$((RANDOM % 4))
		start_bg jpid sh -c 'exec "$@" >/dev/null 2>"$0"' "$TMPD/jm.err" "$JEMATTACH" "${opts[@]}" \
			"$pid" "${args[@]}"
		hit=none
		case $((${KR_IN_CALL:-0} ? 0 : RANDOM % 8)) in
		0|1|2|3|4)	# Aim inside a call: once a thread has every signal blocked,
			# at once or up to 1.5 ms later.
			hit=$("$FIXTURES/killat" "$pid" "$jpid" $((RANDOM % 2 ? 0 : RANDOM % 1500)) 20000) ;;
		5|6)	# Aim at the attachment: once it traces a thread, a little later.
			for ((k = 0; k < 300; k++)); do
				scan "$pid"
				[[ $TRACER == "$jpid" ]] && break
				kill -0 "$jpid" 2>/dev/null || break
			done
			nap "0.00$((RANDOM % 4))$((RANDOM % 10))" ;;
		7)	nap "0.0$((RANDOM % 60))" ;;
		esac
		{ [[ $hit == call ]] || in_call "$pid"; } && CALLS=$((CALLS + 1)) || true
		if (( mode == 0 )); then
			kill -STOP "$jpid" 2>/dev/null || true
			nap 0.0$((RANDOM % 5))
		fi
		# (One killat killed may have been reaped already.)
		[[ $hit != none ]] && KILLED=$((KILLED + 1))
		kill -KILL "$jpid" 2>/dev/null && [[ $hit == none ]] && KILLED=$((KILLED + 1))
		rc=0; wait "$jpid" 2>/dev/null || rc=$?
		[[ -z ${KR_TRACE:-} ]] || echo "    $(date +%T) round $i: ${opts[*]} ${args[*]}: $hit, exit $rc" >&2
		[[ $rc =~ ^(0|5|137)$ ]] ||
			{ fail "round $i (${opts[*]} ${args[*]}): exit $rc: $(cat "$TMPD/jm.err")"; return 1; }
		intact "$pid" "$before" || { echo "    round $i: ${opts[*]} ${args[*]}" >&2; return 1; }
		[[ -z ${KR_AFTER:-} ]] || $KR_AFTER "$pid" "$i" ||
			{ echo "    round $i: ${opts[*]} ${args[*]}" >&2; return 1; }
	done
}
