#!/bin/bash
# stress.sh -- mixed operations (get, stats, prof dump) against a 16-thread
# allocation-heavy fixture that checks its own data and takes a 1 kHz timer
# signal.  Usage: stress.sh OPS.  Run by tests/integration/90-stress.sh
# (1000 operations, in make check) and by `make soak` (10000).
source tests/lib.sh

OPS=${1:-1000}

# What must not change: file-backed mappings (an allocation-heavy process
# maps and unmaps anonymous memory all the time) and open files.
fixed_state() {
	awk '$6 ~ /^\// {print $1, $2, $6}' "/proc/$1/maps"
	for fd in /proc/"$1"/fd/*; do echo "${fd##*/} $(readlink "$fd")"; done | sort
}

t_stress() {
	local pid before i op out rc kinds=(get stats dump) t0 n_ok=0
	start_fixture_cmd pid env MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:17 "$FIXTURES/stressfix" 16
	sleep 0.5
	before=$(fixed_state "$pid")
	t0=$(date +%s)
	for ((i = 0; i < OPS; i++)); do
		op=${kinds[i % 3]}
		rc=0
		case $op in
		get) out=$("$JEMATTACH" "$pid" get stats.allocated stats.active 2>"$TMPD/err") || rc=$? ;;
		stats) "$JEMATTACH" "$pid" stats --json -o "$TMPD/s.json" 2>"$TMPD/err" || rc=$? ;;
		dump) "$JEMATTACH" "$pid" prof dump -o "$TMPD/d.heap" >/dev/null 2>"$TMPD/err" || rc=$? ;;
		esac
		# Exit 5 (every thread was inside jemalloc at that instant) is a refusal,
		# not an error: a busy allocator can be unlucky.
		if [[ $rc == 5 ]] && grep -q "no thread of process" "$TMPD/err"; then continue; fi
		[[ $rc == 0 ]] || fail "op $i ($op): exit $rc: $(cat "$TMPD/err")"
		case $op in
		get) [[ $(awk '$1 == "stats.allocated" {print ($2 > 0)}' <<<"$out") == 1 ]] || fail "op $i: $out" ;;
		stats) jq -e '.jemalloc.stats.allocated > 0' "$TMPD/s.json" >/dev/null || fail "op $i: bad JSON" ;;
		dump) [[ $(head -c 8 "$TMPD/d.heap") == heap_v2/ ]] || fail "op $i: bad dump" ;;
		esac
		n_ok=$((n_ok + 1))
		if (( i % 100 == 99 )); then
			[[ $(fix "$pid" status) == *" errors=0" ]] || fail "data corrupted after op $i"
			[[ $(awk '{print $3}' "/proc/$pid/stat") != [tT] ]] || fail "left stopped after op $i"
		fi
	done
	expect_eq "$(fixed_state "$pid")" "$before"
	out=$(fix "$pid" final)
	expect_match "$out" "errors=0 timer_lost=0$"
	echo "    $n_ok of $OPS operations in $(( $(date +%s) - t0 )) s; fixture: $out" >&2
	(( n_ok * 10 >= OPS * 9 )) || fail "only $n_ok of $OPS operations ran"
}

run_tests
