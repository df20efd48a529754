#!/bin/bash
# 95-faults.sh -- jemattach gets SIGINT or SIGTERM at random moments during 200
# operations; the target always survives and is never left stopped or modified.
source tests/lib.sh

fixed_state() {
	awk '$6 ~ /^\// {print $1, $2, $6}' "/proc/$1/maps"
	for fd in /proc/"$1"/fd/*; do echo "${fd##*/} $(readlink "$fd")"; done | sort
}

t_random_signals_to_jemattach() {
	local pid before i jpid rc sig killed=0 ops=(get stats dump) args
	start_fixture_cmd pid env MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:17 "$FIXTURES/stressfix" 4
	sleep 0.3
	before=$(fixed_state "$pid")
	: >"$TMPD/start"
	for ((i = 0; i < 200; i++)); do
		case ${ops[i % 3]} in
		get) args=(get stats.allocated) ;;
		stats) args=(stats --json -o "$TMPD/s.json") ;;
		dump) args=(prof dump -o "$TMPD/d.heap") ;;
		esac
		sig=$([[ $((RANDOM % 2)) == 0 ]] && echo INT || echo TERM)
		start_bg jpid env --default-signal=INT "$JEMATTACH" "$pid" "${args[@]}"
		sleep "0.0$((RANDOM % 60))"
		kill -"$sig" "$jpid" 2>/dev/null && killed=$((killed + 1))
		rc=0; wait "$jpid" 2>/dev/null || rc=$?
		# Finished, or ended by the signal after restoring (or refused busy).
		[[ $rc =~ ^(0|5|130|143)$ ]] || fail "op $i: exit $rc"
		[[ $(awk '{print $3}' "/proc/$pid/stat") != [tT] ]] || fail "left stopped after op $i"
		[[ $(awk '/TracerPid/ {print $2}' "/proc/$pid/status") == 0 ]] || fail "left traced after op $i"
		if (( i % 20 == 19 )); then
			[[ $(fix "$pid" status) == *" errors=0" ]] || fail "data corrupted after op $i"
		fi
	done
	expect_eq "$(fixed_state "$pid")" "$before"
	expect_match "$(fix "$pid" final)" "errors=0 timer_lost=0$"
	# And it still answers jemalloc calls: no lock was left held.
	jm --timeout 5 "$pid" get stats.allocated
	expect_rc 0
	# A signal waits until the dump's directory is removed (40-prof), but a
	# call left to finish in the target may open its file between our unlink
	# and rmdir; one more dump sweeps such a directory.
	expect_swept "$pid" "$TMPD/start"
	echo "    $killed of 200 operations got a signal while running" >&2
}

run_tests
