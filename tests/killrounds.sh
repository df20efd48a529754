# killrounds.sh -- killing jemattach at random instants of its work on a target, and
# checking the target is as it was.  Source after lib.sh.  Counts in KILLED
# (SIGKILLs sent) and CALLS (seen inside a call when killed).

ALL_BLOCKED=fffffffffffbfeff	# PTRACE_SETSIGMASK ~0: all but SIGKILL and SIGSTOP

# masks PID: "TID SIGBLK" of every thread.
masks() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(awk '/^SigBlk/ {print $2}' "$t/status" 2>/dev/null)"
	done
}

in_call() { grep -qs "^SigBlk:[[:space:]]*$ALL_BLOCKED" /proc/"$1"/task/*/status; }

# intact PID MASKS: alive, no thread stopped or traced, every signal mask as
# before -- given time for a call left running to end and restore itself.
intact() {
	local pid=$1 want=$2 t st
	kill -0 "$pid" 2>/dev/null || { fail "target $pid died"; return 1; }
	for _ in $(seq 300); do
		st=ok
		[[ $(masks "$pid") == "$want" ]] || st=masks
		for t in /proc/"$pid"/task/*; do
			[[ $(awk '{print $3}' "$t/stat" 2>/dev/null) != [tT] ]] || st=stopped
			[[ $(awk '/TracerPid/ {print $2}' "$t/status" 2>/dev/null) == 0 ]] || st=traced
		done
		[[ $st == ok ]] && return 0
		sleep 0.01
	done
	fail "target $pid: $st; masks now: $(masks "$pid" | tr '\n' ' ') wanted: $(tr '\n' ' ' <<<"$want")"
}

# kill_rounds PID N OPS THREADS...: N runs of jemattach, each killed at a
# random instant, each one of OPS ("get stats json dump freeze"), with
# --thread one of THREADS ("-": its own choice).  KR_BEFORE, when set, is a
# command run before each (to put the target in some state); KR_AFTER one
# run after each check of the target (more checks), with the round number.
kill_rounds() {
	local pid=$1 n=$2 i jpid rc args opts tid mode before hit
	local ops=($3)
	shift 3
	local tids=("$@")
	before=$(masks "$pid")
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
		case $((RANDOM % 8)) in
		0|1|2|3|4)	# Aim inside a call: once a thread has every signal blocked,
			# at once or up to 1.5 ms later.
			hit=$("$FIXTURES/killat" "$pid" "$jpid" $((RANDOM % 2 ? 0 : RANDOM % 1500)) 20000) ;;
		5|6)	# Aim at the attachment: once it traces a thread, a little later.
			for _ in $(seq 300); do
				grep -qs "^TracerPid:[[:space:]]*$jpid\$" /proc/"$pid"/task/*/status && break
				kill -0 "$jpid" 2>/dev/null || break
			done
			sleep "0.00$((RANDOM % 4))$((RANDOM % 10))" ;;
		7)	sleep "0.0$((RANDOM % 60))" ;;
		esac
		{ [[ $hit == call ]] || in_call "$pid"; } && CALLS=$((CALLS + 1)) || true
		if (( mode == 0 )); then
			kill -STOP "$jpid" 2>/dev/null || true
			sleep 0.0$((RANDOM % 5))
		fi
		# (One killat killed may have been reaped already.)
		[[ $hit != none ]] && KILLED=$((KILLED + 1))
		kill -KILL "$jpid" 2>/dev/null && [[ $hit == none ]] && KILLED=$((KILLED + 1))
		rc=0; wait "$jpid" 2>/dev/null || rc=$?
		[[ $rc =~ ^(0|5|137)$ ]] ||
			{ fail "round $i (${opts[*]} ${args[*]}): exit $rc: $(cat "$TMPD/jm.err")"; return 1; }
		intact "$pid" "$before" || { echo "    round $i: ${opts[*]} ${args[*]}" >&2; return 1; }
		[[ -z ${KR_AFTER:-} ]] || $KR_AFTER "$pid" "$i" ||
			{ echo "    round $i: ${opts[*]} ${args[*]}" >&2; return 1; }
	done
}
