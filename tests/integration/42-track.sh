#!/bin/bash
# 42-track.sh -- prof track and report sites: which allocation site grows,
# against a fixture whose sites leak, churn and hold at known rates, and Redis.
source tests/lib.sh
source tests/lib-sampler.sh

TRACK=MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:12

# row RANKING FUNCTION: the ranking line of the site named FUNCTION.
row() { grep -E " $2 (<|\[)" <<<"$1" | head -1; }
# near A B PCT: |A - B| <= PCT% of B (floating point).
near() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100)}' ||
		fail "$1 is not within $3% of $2"
}

t_fixture_leak_ranks_first_churn_and_oneoff_are_not_leaks() {
	local pid rates leak churn oneoff secs r
	start_fixture pid "$FIXTURES/trackfix" "$TRACK"
	rates=$(fix "$pid" rates)
	leak=$(awk '{print $2}' <<<"$rates")
	churn=$(awk '{print $4}' <<<"$rates")
	oneoff=$(awk '{print $6}' <<<"$rates")
	jm "$pid" prof track -i 0.3 -n 12 -o "$TMPD/t.jsonl" --format jsonl --svg "$TMPD/t.svg"
	expect_rc 0
	expect_eq "$(wc -l <"$TMPD/t.jsonl")" 12
	jq -e '.hold_ns > 0 and .accum and (.sites | length) >= 3' "$TMPD/t.jsonl" >/dev/null ||
		fail "bad snapshot records"
	secs=$(sed -n 1p <<<"$OUT" | sed -E 's/.* over ([0-9.]+) s.*/\1/')
	# Rank 1: the leak, growing in every interval, at its rate within 15%.
	r=$(sed -n 3p <<<"$OUT")
	expect_match "$r" "^ +1 [0-9a-f]{16} growing +11/11 .* leak_site < leaker \["
	near "$(awk '{print $5}' <<<"$r")" "$leak" 15
	# The churning site: what it allocated and freed over the track (with
	# prof_accum) within 15% of what it did; not a leak.
	r=$(row "$OUT" churn_site)
	[[ -n $r && ! $r =~ growing ]] || fail "churn_site: '$r'"
	near "$(awk '{print $9}' <<<"$r")" "$(awk -v c="$churn" -v s="$secs" 'BEGIN {print c * s}')" 15
	near "$(awk '{print $10}' <<<"$r")" "$(awk -v c="$churn" -v s="$secs" 'BEGIN {print c * s}')" 15
	# The one-off site: flat, holding its 4 MiB.
	r=$(row "$OUT" oneoff_site)
	expect_match "$r" " flat +0/11 "
	near "$(awk '{print $8}' <<<"$r")" "$oneoff" 15
	grep -q "leak_site" "$TMPD/t.svg" || fail "the chart does not name leak_site"
	xmllint --noout "$TMPD/t.svg" 2>/dev/null || ! command -v xmllint >/dev/null || fail "bad SVG"
	# The saved track gives the same ranking.
	r=$(sed -n 3p <<<"$OUT" | awk '{print $2, $3, $4, $5}')
	jm report sites "$TMPD/t.jsonl" --top 3
	expect_rc 0
	expect_eq "$(sed -n 3p <<<"$OUT" | awk '{print $2, $3, $4, $5}')" "$r"
}

t_text_log_has_pmems_shape() {
	local pid
	start_fixture pid "$FIXTURES/trackfix" "$TRACK"
	jm "$pid" prof track -i 0.2 -n 3
	expect_rc 0
	expect_eq "$(grep -cE '^\[[0-9]+\]==== \+[0-9.]+s churn .* hold [0-9.]+ ms sites [0-9]+$' <<<"$OUT")" 3
	expect_match "$(grep -A1 -m1 '^site .* live ' <<<"$OUT" | tail -1)" "^    #0 "
	expect_match "$OUT" "    #0 leak_site \(trackfix.c:[0-9]+\) \[trackfix\]"
}

t_churn_triggers_snapshots_before_the_interval() {
	local pid
	start_fixture pid "$FIXTURES/trackfix" "$TRACK"
	# The leak moves stats.allocated by 1 MiB/s: a snapshot about every
	# 0.5 s, long before -i 60.
	jm "$pid" prof track -i 60 --churn 512K -n 4 --format jsonl -o "$TMPD/churn.jsonl"
	expect_rc 0
	expect_eq "$(jq -s 'length' "$TMPD/churn.jsonl")" 4
	jq -se '.[3].elapsed < 20 and (.[3].allocated - .[0].allocated) >= 3 * 512 * 1024' \
		"$TMPD/churn.jsonl" >/dev/null || fail "snapshots not triggered by churn: $(cat "$TMPD/churn.jsonl" | jq -c '[.elapsed, .allocated]')"
}

t_ctrl_c_leaves_valid_log_and_restores_prof_active() {
	local pid jpid rc=0
	start_fixture pid "$FIXTURES/trackfix" "$TRACK,prof_active:false"
	start_bg jpid "$JEMATTACH" "$pid" prof track -i 0.2 -o "$TMPD/ctrlc.jsonl" --format jsonl \
		2>"$TMPD/cerr" >"$TMPD/cout"
	for _ in $(seq 200); do (( $(cat "$TMPD/ctrlc.jsonl" 2>/dev/null | wc -l) >= 3 )) && break; sleep 0.05; done
	# The track holds a thread during each snapshot: ask between two.
	for _ in $(seq 50); do jm "$pid" get prof.active; [[ $RC == 0 ]] && break; sleep 0.02; done
	expect_eq "$OUT" true
	kill -INT "$jpid"
	wait "$jpid" 2>/dev/null || rc=$?
	expect_eq "$rc" 0
	expect_match "$(cat "$TMPD/cerr")" "prof.active restored to false"
	jq -e . "$TMPD/ctrlc.jsonl" >/dev/null || fail "the log is not valid JSON lines"
	expect_match "$(cat "$TMPD/cout")" "leak_site"
	jm "$pid" get prof.active
	expect_eq "$OUT" false
}

t_ctrl_c_at_any_moment_ends_cleanly() {
	local pid jpid rc i
	start_fixture pid "$FIXTURES/trackfix" "$TRACK,prof_active:false"
	for i in 1 2 3 4 5 6; do
		rc=0
		start_bg jpid "$JEMATTACH" "$pid" prof track -i 0.05 --churn 64K -o "$TMPD/any.$i" \
			--format jsonl 2>"$TMPD/any.err" >/dev/null
		# A background job of this shell starts with SIGINT ignored: one sent
		# before jemattach catches it would be lost (and the track go on), so
		# "any moment" counts from its handler (SigCgt bit 2).
		for _ in $(seq 200); do
			(( 0x$(awk '$1 == "SigCgt:" { print $2 }' "/proc/$jpid/status" 2>/dev/null || echo 0) & 2 )) && break
			sleep 0.05
		done
		sleep "0.$((RANDOM % 4))"
		kill -INT "$jpid"
		wait "$jpid" 2>/dev/null || rc=$?
		[[ $rc == 0 ]] || fail "run $i: exit $rc: $(cat "$TMPD/any.err")"
		jq -se "type == \"array\"" "$TMPD/any.$i" >/dev/null || fail "run $i: the log is not valid JSON lines"
		expect_eq "$(fix "$pid" rates | awk '{print $1}')" leak_rate
	done
	jm "$pid" get prof.active
	expect_eq "$OUT" false
}

# The same, not left to chance: a Ctrl-C at the start of each call of a
# track in turn (the test build's crash point, attach/crashpoint.h), until a
# track ends before its Nth call.  Each ends the track cleanly: exit 0, what
# was written a valid log, prof.active back to false.  (A Ctrl-C inside the
# read of opt.prof_prefix before a dump once ended one in "not attached".)
t_ctrl_c_at_each_call_ends_cleanly() {
	local pid n said rc
	crash_hooks
	start_fixture pid "$FIXTURES/trackfix" "$TRACK,prof_active:false"
	for ((n = 1; ; n++)); do
		((n <= 60)) || fail "a track of 3 snapshots still made a ${n}th call"
		jm_run env --default-signal=INT JEMATTACH_TEST_CRASH_AT=frame:int:$n \
			"$JEMATTACH_HOOKS" "$pid" prof track -i 0.05 --churn 64K -n 3 \
			-o "$TMPD/each.$n" --format jsonl
		said=$ERR rc=$RC
		# Before the track changed anything (the calls that choose between
		# the profiler and the sampler), a Ctrl-C is the default death.
		if [[ $rc == 130 && $said != *"prof.active turned on"* ]]; then
			[[ ! -s $TMPD/each.$n ]] || fail "a Ctrl-C at call $n: exit 130 after a log"
		else
			[[ $rc == 0 ]] || fail "a Ctrl-C at call $n: exit $rc: $said"
			jq -se "type == \"array\"" "$TMPD/each.$n" >/dev/null ||
				fail "a Ctrl-C at call $n: the log is not valid JSON lines"
		fi
		jm "$pid" get prof.active
		expect_eq "$OUT" false
		[[ $rc == 130 || $said == *"stopped by signal"* ]] || break
	done
	((n > 5)) || fail "the track ended after $n calls: the crash point was never reached"
	echo "    a Ctrl-C at each of $((n - 1)) calls ended the track cleanly" >&2
}

# Without opt.prof the track samples with uprobes (at the process's
# lg_prof_sample) and says so: the leak ranks first, growing in every
# interval at its rate within 15%; --churn needs jemalloc's profiler.
t_without_profiling_uses_the_sampler() {
	local pid leak r
	can_sample
	start_fixture pid "$FIXTURES/trackfix" MALLOC_CONF=lg_prof_sample:12
	leak=$(fix "$pid" rates | awk '{print $2}')
	jm "$pid" prof track -i 1 -n 4 --max-overhead 0
	expect_rc 0
	expect_match "$ERR" "profiler is off in process $pid \(opt.prof false\): prof track uses the sampler"
	expect_eq "$(grep -cE '^\[[0-9]+\]==== ' <<<"$OUT")" 4
	# No stats read, no thread held: said as unknown, not as zeros.
	expect_eq "$(grep -cE '^\[[0-9]+\]==== .* allocated - hold - sites ' <<<"$OUT")" 4
	r=$(grep -A2 '^sites by growth' <<<"$OUT" | sed -n 3p)
	expect_match "$r" "^ +1 [0-9a-f]{16} growing +3/3 .* leak_site < leaker \["
	near "$(awk '{print $5}' <<<"$r")" "$leak" 15
	jm "$pid" prof track -i 1 -n 2 --churn 1M
	expect_rc 2
	expect_match "$ERR" "--churn needs jemalloc's profiler"
}

# --sampler on a prof:true process: the sampler, prof.active never touched.
t_sampler_on_a_prof_true_process() {
	local pid
	can_sample
	start_fixture pid "$FIXTURES/trackfix" "$TRACK"
	jm "$pid" prof track --sampler -i 0.5 -n 2 --max-overhead 0 --format jsonl
	expect_rc 0
	expect_eq "$(wc -l <<<"$OUT")" 2
	expect_eq "$(jq -c '[.allocated, .hold_ns]' <<<"$OUT" | sort -u)" "[null,null]"
	[[ $ERR != *"prof.active"* ]] || fail "prof.active touched: $ERR"
	expect_match "$ERR" "a snapshot every 0.5 s"
	jm "$pid" get prof.active
	expect_eq "$OUT" true
}

# Where the sampler cannot run either: exit 4 with the prof:true alternative.
t_without_profiling_or_sampler_exit_4() {
	local pid
	command -v capsh >/dev/null || skip "no capsh"
	[[ $(id -u) == 0 ]] || skip "not root"
	start_fixture pid "$FIXTURES/trackfix"
	jm_run capsh --drop=cap_bpf,cap_perfmon,cap_sys_admin -- -c \
		"exec '$JEMATTACH' $pid prof track -i 0.2 -n 2"
	expect_rc 4
	expect_match "$ERR" "MALLOC_CONF=prof:true"
}

t_bad_options_exit_2() {
	local pid
	start_fixture pid "$FIXTURES/trackfix" "$TRACK"
	jm "$pid" prof track -i 0
	expect_rc 2
	jm "$pid" prof track --format xml
	expect_rc 2
	jm "$pid" prof track -n 1 --fold '('
	expect_rc 2
	jm report sites
	expect_rc 2
	jm report sites "$TMPD/nothing"
	expect_rc 2
}

t_static_prefixed_jemalloc() {
	local pid
	start_fixture pid "$FIXTURES/jemfix-static-je" MALLOC_CONF=prof:true,lg_prof_sample:12
	jm "$pid" prof track -i 0.2 -n 3 --format jsonl -o "$TMPD/s.jsonl"
	expect_rc 0
	expect_eq "$(jq -s 'length' "$TMPD/s.jsonl")" 3
	expect_match "$OUT" "estimated from live growth \(no opt.prof_accum\)"
}

t_report_sites_reads_jemallocs_own_dumps() {
	local pid
	mkdir "$TMPD/dumps"
	start_fixture pid "$FIXTURES/trackfix" \
		"$TRACK,lg_prof_interval:22,prof_prefix:$TMPD/dumps/jeprof"
	for _ in $(seq 100); do (( $(ls "$TMPD/dumps" | wc -l) >= 8 )) && break; sleep 0.1; done
	jm report sites "$TMPD/dumps" --top 3
	expect_rc 0
	expect_match "$(sed -n 3p <<<"$OUT")" "^ +1 [0-9a-f]{16} growing .* leak_site < leaker \["
}

t_redis_growing_keyspace_names_redis_code() {
	local pid bpid r
	start_redis pid "$TRACK,lg_prof_sample:16"
	start_bg bpid redis-benchmark -p "$REDIS_PORT" -h 127.0.0.1 -t set -r 100000000 -n 100000000 \
		-d 64 -c 4 -P 8 -q >/dev/null 2>&1
	sleep 1
	# Redis's zmalloc family is folded by default, as in analyze.
	jm "$pid" prof track -i 0.5 -n 10 --top 5 -o "$TMPD/redis.log"
	expect_rc 0
	kill "$bpid"
	# Debian's redis-server is stripped (and a link to redis-check-rdb):
	# names come from its dynamic symbols, static functions are module+offset.
	# Robust: the top site grows in Redis's own code, and the growing sites
	# include the exported functions that build a new key and its value.
	r=$(sed -n 3p <<<"$OUT")
	expect_match "$r" "^ +1 [0-9a-f]{16} growing .*\[/usr/bin/redis-(server|check-rdb)\]$"
	grep -qE " growing .* (_sdsnewlen|dictAddRaw|createObject|createStringObject) " <<<"$OUT" ||
		fail "no key-building function among the growing sites: $OUT"
	expect_match "$(cat "$TMPD/redis.log")" "    #[0-9]+ (dbAdd|setKey|setCommand) \[redis-"
	[[ ! $(cat "$TMPD/redis.log") =~ "#0 zmalloc" ]] || fail "zmalloc not folded"
	expect_eq "$(redis-cli -p "$REDIS_PORT" ping)" PONG
}

run_tests
