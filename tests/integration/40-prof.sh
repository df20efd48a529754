#!/bin/bash
# 40-prof.sh -- heap-profiling control from outside: status, on/off, dump, reset,
# gdump, window, and purge/decay.
source tests/lib.sh
source tests/lib-sampler.sh

PROF=MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:12

t_status_reports_the_targets_settings() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	jm "$pid" prof status --json
	expect_rc 0
	expect_eq "$(jq .available <<<"$OUT")" true
	expect_eq "$(jq '."prof.lg_sample"' <<<"$OUT")" "$(fix "$pid" "get z prof.lg_sample")"
	expect_eq "$(jq .sample_bytes <<<"$OUT")" 4096
	expect_eq "$(jq -r '."opt.prof_prefix"' <<<"$OUT")" "$(fix "$pid" "get s opt.prof_prefix")"
	expect_eq "$(jq '."prof.active"' <<<"$OUT")" "$(fix "$pid" "get b prof.active")"
	jm "$pid" prof status
	expect_rc 0
	expect_match "$OUT" "prof.lg_sample +12 \(sample period 4096 bytes\)"
}

t_on_off_print_previous_state() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	jm "$pid" prof on
	expect_rc 0
	expect_eq "$OUT" "prof.active: false -> true"
	expect_eq "$(fix "$pid" "get b prof.active")" true
	jm "$pid" get prof.active
	expect_eq "$OUT" true
	jm "$pid" prof off
	expect_eq "$OUT" "prof.active: true -> false"
	expect_eq "$(fix "$pid" "get b prof.active")" false
}

t_without_opt_prof_exit_4_and_target_unaffected() {
	local pid before
	start_fixture pid "$FIXTURES/jemfix"
	before=$(proc_state "$pid")
	jm "$pid" prof on
	expect_rc 4
	expect_eq "$ERR" "jemattach: opt.prof is false; profiling can only be enabled at start: restart with MALLOC_CONF=prof:true,prof_active:false (\`prof sample SECONDS\` samples without it: uprobes, root, no restart)"
	jm "$pid" prof dump
	expect_rc 4
	expect_state "$pid" "$before"
	expect_eq "$(fix "$pid" "get b prof.active")" false
}

t_redis_without_profiling_exit_4() {
	local pid before
	start_redis pid
	before=$(proc_state "$pid")
	jm "$pid" prof on
	expect_rc 4
	expect_match "$ERR" "opt.prof is false; profiling can only be enabled at start: restart with MALLOC_CONF=prof:true,prof_active:false"
	expect_state "$pid" "$before"
	expect_eq "$(redis-cli -p "$REDIS_PORT" ping)" PONG
}

t_prefixed_build_names_its_own_variable() {
	local pid
	start_fixture pid "$FIXTURES/jemfix-static-rjem"
	jm "$pid" prof on
	expect_rc 4
	# objcopy renamed the functions, not the string: this copy still reads MALLOC_CONF.
	expect_match "$ERR" "restart with MALLOC_CONF=prof:true"
	jm "$pid" info --json
	expect_eq "$(jq -r .prefix <<<"$OUT")" _rjem_
}

t_dump_is_retrieved_and_removed_from_the_target() {
	local pid cwd
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	jm "$pid" prof on
	fix "$pid" "alloc 2000 5000" >/dev/null
	cwd=$(fix_cwd "$pid")
	(cd "$TMPD" && "$JEMATTACH" "$pid" prof dump >"$TMPD/out" 2>&1) || fail "$(cat "$TMPD/out")"
	expect_match "$(cat "$TMPD/out")" "^jeprof\.$pid\.0\.heap \([0-9]+ bytes\)$"
	expect_match "$(head -1 "$TMPD/jeprof.$pid.0.heap")" "^heap_v2/4096"
	grep -q MAPPED_LIBRARIES "$TMPD/jeprof.$pid.0.heap" || fail "no MAPPED_LIBRARIES"
	# The next default name does not overwrite the first.
	(cd "$TMPD" && "$JEMATTACH" "$pid" prof dump >/dev/null) || fail "second dump"
	[[ -s $TMPD/jeprof.$pid.1.heap ]] || fail "no second file"
	jeprof --text "$FIXTURES/jemfix" "$TMPD/jeprof.$pid.0.heap" >"$TMPD/jeprof.txt" 2>/dev/null
	expect_match "$(head -1 "$TMPD/jeprof.txt")" "^Total: [0-9.]+ MB"
	# Nothing left in the target's filesystem view or working directory.
	expect_eq "$(dump_dirs_since "$TMPD/out")" ""
	expect_eq "$(ls -A "$cwd")" ""
	jm "$pid" prof dump -o -
	expect_match "$(head -1 <<<"$OUT")" "^heap_v2/"
}

t_dump_goes_to_the_prof_prefix_directory() {
	local pid
	mkdir "$TMPD/pfx"
	start_fixture pid "$FIXTURES/jemfix" "MALLOC_CONF=prof:true,prof_prefix:$TMPD/pfx/app"
	jm -v "$pid" prof dump -o "$TMPD/p.heap"
	expect_rc 0
	expect_match "$(head -1 "$TMPD/p.heap")" "^heap_v2/"
	expect_eq "$(ls -A "$TMPD/pfx")" ""
}

# A Ctrl-C inside the prof.dump call (at its first system call, the open)
# gives the call up; the call goes on in the target, but the directory it
# writes in is removed before we end, and nothing is left to sweep.
t_ctrl_c_during_a_dump_leaves_nothing() {
	local pid
	crash_hooks
	mkdir "$TMPD/int"
	start_fixture pid "$FIXTURES/jemfix" "MALLOC_CONF=prof:true,prof_prefix:$TMPD/int/app"
	# (SIGINT's default action back: the harness may run us in the background.)
	jm_run env --default-signal=INT JEMATTACH_TEST_CRASH_AT=syscall:int \
		"$JEMATTACH_HOOKS" -v "$pid" prof dump -o "$TMPD/i.heap"
	expect_rc 130
	expect_match "$ERR" "using tid"
	expect_eq "$(ls -A "$TMPD/int")" ""
	[[ ! -e $TMPD/i.heap ]] || fail "a cut-short dump wrote $TMPD/i.heap"
	# The call we left: done in the target, with no directory to write in.
	sleep 0.5
	expect_eq "$(ls -A "$TMPD/int")" ""
	expect_eq "$(fix "$pid" ping)" pong
	jm "$pid" prof dump -o "$TMPD/i.heap"
	expect_rc 0
	expect_match "$(head -1 "$TMPD/i.heap")" "^heap_v2/"
	expect_eq "$(ls -A "$TMPD/int")" ""
}

# A jemattach killed during a dump cannot remove its private directory; the
# next dump beside it does, and leaves alone one that a live jemattach holds.
t_a_killed_dumps_directory_is_removed_by_the_next_dump() {
	local pid left held busy=jemattach.000000000000000000000000
	crash_hooks
	mkdir "$TMPD/killed"
	start_fixture pid "$FIXTURES/jemfix" "MALLOC_CONF=prof:true,prof_prefix:$TMPD/killed/app"
	# Killed inside the prof.dump call (at its first system call, the open):
	# the call goes on without us and writes the dump into the directory.
	{ JEMATTACH_TEST_CRASH_AT=syscall "$JEMATTACH_HOOKS" "$pid" prof dump -o "$TMPD/k.heap"; } \
		>/dev/null 2>&1 && fail "the crash point did not fire"
	left=$(ls "$TMPD/killed")
	expect_match "$left" '^jemattach\.[0-9a-f]{24}$'
	for _ in $(seq 100); do [[ -s $TMPD/killed/$left/dump.heap ]] && break; sleep 0.05; done
	[[ -s $TMPD/killed/$left/dump.heap ]] || fail "the call left to finish wrote no dump"
	mkdir -m 700 "$TMPD/killed/$busy"
	start_bg held bash -c 'exec 9<"$1" && flock 9 && exec sleep 60' _ "$TMPD/killed/$busy"
	wait_exe "$held" sleep
	# Both older than the sweep's 2 s (a directory younger may be one being made).
	sleep 2.2
	jm -v "$pid" prof dump -o "$TMPD/p.heap"
	expect_rc 0
	expect_match "$(head -1 "$TMPD/p.heap")" "^heap_v2/"
	expect_match "$ERR" "removed 1 private dump directory in $TMPD/killed that a killed jemattach had left"
	expect_eq "$(ls "$TMPD/killed")" "$busy"
	expect_eq "$(fix "$pid" ping)" pong
}

t_redis_dump_reads_with_jeprof() {
	local pid
	start_redis pid "$PROF"
	jm "$pid" prof on
	expect_rc 0
	expect_eq "$(redis-cli -p "$REDIS_PORT" debug populate 20000 key 100)" OK
	jm "$pid" get prof.active
	expect_eq "$OUT" true
	jm "$pid" prof dump -o "$TMPD/redis.heap"
	expect_rc 0
	jeprof --text /usr/bin/redis-server "$TMPD/redis.heap" >"$TMPD/j.txt" 2>/dev/null
	expect_match "$(head -1 "$TMPD/j.txt")" "^Total: [0-9.]+ MB"
	grep -q zmalloc "$TMPD/j.txt" || fail "no zmalloc in jeprof output"
	expect_eq "$(redis-cli -p "$REDIS_PORT" dbsize)" 20000
}

t_reset_and_gdump() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	jm "$pid" prof reset 14
	expect_rc 0
	expect_eq "$(fix "$pid" "get z prof.lg_sample")" 14
	jm "$pid" prof reset
	expect_rc 0
	expect_eq "$(fix "$pid" "get z prof.lg_sample")" 14
	jm "$pid" prof reset 99
	expect_rc 2
	jm "$pid" prof gdump on
	expect_eq "$OUT" "prof.gdump: false -> true"
	expect_eq "$(fix "$pid" "get b prof.gdump")" true
	jm "$pid" prof gdump maybe
	expect_rc 2
}

t_window_dumps_and_restores() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	jm "$pid" prof window 0.5 -o "$TMPD/w"
	expect_rc 0
	expect_match "$(head -1 "$TMPD/w/base.heap")" "^heap_v2/"
	expect_match "$(head -1 "$TMPD/w/window.heap")" "^heap_v2/"
	expect_match "$ERR" "prof.active restored to false"
	expect_eq "$(fix "$pid" "get b prof.active")" false
}

t_window_ctrl_c_restores_prof_active() {
	local pid jpid rc=0
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	start_bg jpid "$JEMATTACH" "$pid" prof window 60 -o "$TMPD/w" 2>"$TMPD/werr"
	for _ in $(seq 100); do grep -q "profiling active" "$TMPD/werr" && break; sleep 0.05; done
	expect_eq "$(fix "$pid" "get b prof.active")" true
	kill -INT "$jpid"
	wait "$jpid" 2>/dev/null || rc=$?
	expect_eq "$rc" 130
	expect_match "$(cat "$TMPD/werr")" "prof.active restored to false"
	expect_eq "$(fix "$pid" "get b prof.active")" false
}

t_dump_analyze_names_the_site() {
	local pid held
	start_fixture pid "$FIXTURES/heapsites" MALLOC_CONF=prof:true,lg_prof_sample:14
	expect_eq "$(fix "$pid" "big 24")" ok
	expect_eq "$(fix "$pid" "small 4")" ok
	jm "$pid" prof dump -o "$TMPD/a.heap" --analyze --top 3
	expect_rc 0
	expect_match "$(sed -n 3p <<<"$OUT")" " keep_big$"
	held=$(fix "$pid" held | awk '{print $2}')
	# The flat column is MB (10^6 bytes), un-sampled: within 10% of the truth.
	awk -v mb="$(sed -n 3p <<<"$OUT" | awk '{print $1}')" -v b="$held" \
		'BEGIN {exit !(mb * 1e6 > b * 0.9 && mb * 1e6 < b * 1.1)}' || fail "keep_big: $OUT vs $held bytes"
	jm "$pid" prof dump -o - --analyze
	expect_rc 2
}

t_window_reports_what_grew() {
	local pid jpid rc=0 grew line
	start_fixture pid "$FIXTURES/heapsites" MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:12
	expect_eq "$(fix "$pid" "small 8")" ok
	start_bg jpid "$JEMATTACH" "$pid" prof window 1.5 -o "$TMPD/w2" --top 5 >"$TMPD/w2.out" 2>"$TMPD/w2.err"
	for _ in $(seq 300); do grep -q "profiling active" "$TMPD/w2.err" 2>/dev/null && break; sleep 0.02; done
	# Long-lived growth inside the window: 16 MiB more in keep_big.
	expect_eq "$(fix "$pid" "big 16")" ok
	wait "$jpid" 2>/dev/null || rc=$?
	expect_eq "$rc" 0
	line=$(grep -A3 "allocation sites that grew" "$TMPD/w2.out" | sed -n 3p)
	expect_match "$line" " keep_big$"
	grew=$(awk '{print $1}' <<<"$line")
	awk -v mb="$grew" 'BEGIN {b = 16 * 1048576; exit !(mb * 1e6 > b * 0.9 && mb * 1e6 < b * 1.1)}' ||
		fail "keep_big grew $grew MB, expected 16 MiB"
	# keep_small's 8 MiB predates the window: not reported as growth.
	grep -A8 "allocation sites that grew" "$TMPD/w2.out" | grep -q small_block && fail "small_block reported"
	expect_match "$(cat "$TMPD/w2.err")" "prof.active restored to false"
}

t_purge_releases_dirty_pages() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" MALLOC_CONF=dirty_decay_ms:-1
	fix "$pid" "alloc 3000 20000" >/dev/null
	fix "$pid" free >/dev/null
	(( $(fix "$pid" "get z stats.arenas.4096.pdirty") > 0 )) || fail "no dirty pages to purge"
	jm "$pid" purge
	expect_rc 0
	expect_match "$OUT" "purge all arenas"
	expect_match "$OUT" "dirty +[1-9][0-9]* -> 0 +pages"
	expect_eq "$(fix "$pid" "get z stats.arenas.4096.pdirty")" 0
	jm "$pid" decay 0
	expect_rc 0
	jm "$pid" purge 9999
	expect_rc 2
	expect_match "$ERR" "arena 9999 does not exist"
	jm "$pid" purge x
	expect_rc 2
}

t_status_with_profiling_off_says_so() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" MALLOC_CONF=lg_prof_sample:17
	jm "$pid" prof status
	expect_rc 0
	expect_match "$OUT" "prof.lg_sample +profiling is off \(opt.prof false\); configured sample period 131072 bytes"
	jm "$pid" prof status --json
	expect_eq "$(jq -c '[.sample_bytes, .profiling]' <<<"$OUT")" "[131072,false]"
}

# Without opt.prof, prof window samples with uprobes (prof sample's sampler,
# at most as sparsely as the process's lg_prof_sample) and says so:
# leakfix's leak first, its bytes within 15% of the truth.  --lg-sample sets
# the rate (before: refused on the sampler's path); on a prof:true process
# without --sampler it is refused, its window untouched.
t_window_without_opt_prof_uses_the_sampler() {
	local pid truth
	can_sample
	start_fixture pid "$FIXTURES/leakfix" MALLOC_CONF=lg_prof_sample:14
	jm "$pid" prof window 2 --max-overhead 0 -o "$TMPD/ws" --top 3
	expect_rc 0
	expect_match "$ERR" "profiler is off in process $pid \(opt.prof false\): prof window uses the sampler"
	expect_match "$ERR" "up to 2\^14 as samples come faster"
	expect_match "$OUT" $'allocation sites that grew during the window[^\n]*\nTotal: [0-9.]+ MB\n +[0-9.]+ +[0-9.]+% +[0-9.]+% +[0-9.]+ +[0-9.]+% leak_site'
	truth=$(awk -v s="$(window_secs)" -v r=$RATE 'BEGIN { printf "%d", s * r }')
	jm analyze "$TMPD/ws/window.heap" --format json --pid "$pid"
	expect_rc 0
	within "$(site "$OUT" leak_site)" "$truth" $((truth * 15 / 100))
	jm "$pid" prof window 1 --lg-sample 13 --max-overhead 0 -o "$TMPD/ws13"
	expect_rc 0
	expect_match "$ERR" "1 in 2\^13 bytes on average\)"
	expect_match "$(head -1 "$TMPD/ws13/window.heap")" '^heap_v2/8192$'
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	jm "$pid" prof window 1 --lg-sample 13 -o "$TMPD/wp"
	expect_rc 2
	expect_match "$ERR" "--lg-sample is the sampler's: process $pid has jemalloc's profiler"
	[[ ! -e $TMPD/wp ]] || fail "a window directory was made"
}

# Where the sampler cannot run either (here: without CAP_BPF/CAP_PERFMON):
# exit 4 with the prof:true alternative, checked before anything is written.
t_failed_window_checks_first_and_leaves_nothing() {
	local pid
	command -v capsh >/dev/null || skip "no capsh"
	[[ $(id -u) == 0 ]] || skip "not root"
	start_fixture pid "$FIXTURES/jemfix"
	mkdir "$TMPD/empty"
	jm_run env -C "$TMPD/empty" capsh --drop=cap_bpf,cap_perfmon,cap_sys_admin -- -c \
		"exec '$JEMATTACH' $pid prof window 1"
	expect_rc 4
	expect_match "$ERR" "MALLOC_CONF=prof:true"
	[[ $ERR != *"base dump"* ]] || fail "dumped before checking: $ERR"
	expect_eq "$(ls -A "$TMPD/empty")" ""
}

t_window_shows_growth_and_shrinkage_apart() {
	local pid jpid rc=0 out
	start_fixture pid "$FIXTURES/heapsites" MALLOC_CONF=prof:true,lg_prof_sample:12
	expect_eq "$(fix "$pid" "big 8")" ok
	expect_eq "$(fix "$pid" "small 8")" ok
	start_bg jpid "$JEMATTACH" "$pid" prof window 1.5 -o "$TMPD/w3" >"$TMPD/w3.out" 2>"$TMPD/w3.err"
	for _ in $(seq 300); do grep -q "profiling active" "$TMPD/w3.err" 2>/dev/null && break; sleep 0.02; done
	# In the window: everything freed, then keep_big 16 MiB: +8 there, -8 in small_block.
	expect_eq "$(fix "$pid" free)" ok
	expect_eq "$(fix "$pid" "big 16")" ok
	wait "$jpid" 2>/dev/null || rc=$?
	expect_eq "$rc" 0
	out=$(cat "$TMPD/w3.out")
	expect_match "$out" $'allocation sites that grew[^\n]*:\nTotal: [78]\\.[0-9] MB\n +[78]\\.[0-9] +100\\.0% +100\\.0% .* keep_big\n'
	expect_match "$out" $'allocation sites that shrank[^\n]*:\nTotal: -[78]\\.[0-9] MB\n +-[78]\\.[0-9] +100\\.0% +100\\.0% .* small_block($|\n)'
	expect_match "$out" "net change during the window: [-+]0\\.[0-9] MB"
}

t_vv_dump_says_where_and_how() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	jm -vv "$pid" prof dump -o "$TMPD/v.heap"
	expect_rc 0
	expect_match "$ERR" "prof.dump wrote /(tmp|var/tmp|dev/shm)/jemattach\.[0-9a-f]{24}/dump\.heap \(in process $pid's own filesystem view"
	expect_match "$ERR" "read $(stat -c %s "$TMPD/v.heap") bytes of it back through /proc/$pid/root with uid 0's rights"
	expect_match "$ERR" "removed /(tmp|var/tmp|dev/shm)/jemattach\.[0-9a-f]{24} and the dump"
}

run_tests
