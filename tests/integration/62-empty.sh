#!/bin/bash
# 62-empty.sh -- a heap profile that comes out empty says why: the sample
# period, what the process allocated, whether profiling is active, what to do
# (prof dump --analyze, prof window, analyze of the file).
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

# Profiling starts inactive: nothing of the fixture's start-up is sampled, so
# the profiles below are empty whatever jemalloc's random sample points are.
CONF=MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:19

t_dump_analyze_explains() {
	local pid
	start_fixture pid "$FIXTURES/cxxsites" "$CONF"
	jm "$pid" prof dump -o "$TMPD/off.heap" --analyze
	expect_rc 0
	expect_match "$OUT" $'Total: 0.0 MB'
	expect_match "$ERR" "the profile is empty: no sampled allocation is live"
	expect_match "$ERR" "profiling is not active \\(prof.active false\\): nothing is sampled until \`jemattach $pid prof on\`"
	jm "$pid" prof on
	expect_rc 0
	# 64 KiB in 64-byte blocks, each freed at once: nothing can be live.
	expect_eq "$(fix "$pid" "little 64")" ok
	jm "$pid" prof dump -o "$TMPD/e.heap" --analyze
	expect_rc 0
	expect_match "$OUT" $'Total: 0.0 MB'
	expect_match "$ERR" "one allocation per 512.0 KiB allocated, on average \\(prof.lg_sample 19\\)"
	expect_match "$ERR" "since it started, its arenas handed out [0-9.]+ [KM]iB in [1-9][0-9]* blocks"
	expect_match "$ERR" "to see more: \`jemattach $pid prof reset 14\` \\(a sample per 16.0 KiB"
	expect_match "$ERR" "MALLOC_CONF=prof_accum:true"
	[[ $ERR != *"not active"* ]] || fail "profiling is active now: $ERR"
	# Offline, the same file: what the profile itself says.
	jm analyze "$TMPD/e.heap"
	expect_rc 0
	expect_match "$ERR" "the profile is empty: .*one allocation per 512.0 KiB.*prof reset 14"
	[[ $ERR != *"arenas handed out"* ]] || fail "offline, nothing is read from a process: $ERR"
}

# A profile with samples has no such note: the explanation is not noise.
t_not_empty_no_note() {
	local pid
	start_fixture pid "$FIXTURES/cxxsites" MALLOC_CONF=prof:true,lg_prof_sample:12
	expect_eq "$(fix "$pid" "cpp 2")" ok
	jm "$pid" prof dump -o "$TMPD/full.heap" --analyze
	expect_rc 0
	[[ $ERR != *"profile is empty"* ]] || fail "a note on a profile with samples: $ERR"
}

t_window_explains() {
	local pid
	start_fixture pid "$FIXTURES/cxxsites" "$CONF"
	jm --timeout 30 "$pid" prof window 0.3 -o "$TMPD/win"
	expect_rc 0
	expect_match "$OUT" "allocation sites that grew during the window"
	expect_match "$ERR" "nothing sampled during the window is still live"
	expect_match "$ERR" "one allocation per 512.0 KiB allocated"
	expect_match "$ERR" "a longer window"
}

run_tests
