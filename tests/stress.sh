#!/bin/bash
# stress.sh -- mixed operations (get, stats, prof dump) against a 16-thread
# allocation-heavy fixture that checks its own data and takes a 1 kHz timer
# signal.  Usage: stress.sh OPS.  Run by tests/integration/90-stress.sh
# (500 operations, in make check) and by `make soak` (10000).  The
# operations go through the library (tests/stress_driver.c) in batches of
# 100, the fixture's data and state checked after each batch.
source tests/lib.sh

OPS=${1:-1000}
DRIVER=$(readlink -f "${STRESS_DRIVER:-$(dirname "$JEMATTACH")/stress_driver}")

# What must not change: file-backed mappings (an allocation-heavy process
# maps and unmaps anonymous memory all the time) and open files.
fixed_state() {
	awk '$6 ~ /^\// {print $1, $2, $6}' "/proc/$1/maps"
	for fd in /proc/"$1"/fd/*; do echo "${fd##*/} $(readlink "$fd")"; done | sort
}

t_stress() {
	local pid before done_ops=0 busy=0 out t0=$SECONDS batch
	start_fixture_cmd pid env MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:17 "$FIXTURES/stressfix" 16
	sleep 0.5
	before=$(fixed_state "$pid")
	while (( done_ops < OPS )); do
		batch=$(( OPS - done_ops < 100 ? OPS - done_ops : 100 ))
		out=$("$DRIVER" "$pid" "$batch" 2>"$TMPD/err") || fail "after $done_ops operations: $(cat "$TMPD/err")"
		busy=$(( busy + $(awk '{print $4}' <<<"$out") ))
		done_ops=$(( done_ops + batch ))
		[[ $(fix "$pid" status) == *" errors=0" ]] || fail "data corrupted after $done_ops operations"
		[[ $(awk '{print $3}' "/proc/$pid/stat") != [tT] ]] || fail "left stopped after $done_ops operations"
		[[ $(awk '/TracerPid/ {print $2}' "/proc/$pid/status") == 0 ]] || fail "left traced"
	done
	expect_eq "$(fixed_state "$pid")" "$before"
	out=$(fix "$pid" final)
	expect_match "$out" "errors=0 timer_lost=0$"
	echo "    $OPS operations ($busy refused: every thread inside jemalloc) in $((SECONDS - t0)) s; fixture: $out" >&2
	(( busy * 10 <= OPS )) || fail "$busy of $OPS operations refused"
	# The CLI on the same busy target, a few times: a thin layer, same engine.
	jm "$pid" get stats.allocated
	expect_rc 0
}

run_tests
