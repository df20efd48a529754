#!/bin/bash
# 65-sampler.sh -- `prof sample`: heap profiles of a process started without
# prof:true, by per-process uprobes and eBPF.  The leakfix fixture knows its
# truth (a 2.5 MiB/s leak in leak_site, as much churn in churn_site, an 8 MiB
# block from before the window); the safety tests read the probed code's
# bytes through /proc/PID/mem (a uprobe is a breakpoint there while it is in
# place: 0xcc, arm64 BRK #5 whose first byte is 0xa0).
# runner: long (light files run beside it: its windows wait on the clock, and leakfix keeps its rate by the clock)
source tests/lib.sh
source tests/lib-sampler.sh

SECS=${SAMPLER_SECS:-5}
KILLS=${SAMPLER_KILLS:-20}
VERSIONS_DIR=$(dirname "$FIXTURES")/versions
# lg_sample 14: about 1400 samples in 5 s, so a 15% bound is several standard
# errors wide (at jemalloc's 19, 5 s of this leak is 25 samples: +-20%).
SAMPLE=(--lg-sample 14 --max-overhead 0)
# The first byte of the breakpoint a uprobe writes: x86_64 int3; arm64 the
# kernel's BRK #5, 0xd42000a0 (little-endian).
case $(uname -m) in aarch64) BRK=a0 ;; *) BRK=cc ;; esac

# sample PID FILE ARGS...: a window of $SECS s into FILE.
sample() {
	local pid=$1 file=$2; shift 2
	jm "$pid" prof sample "$SECS" "${SAMPLE[@]}" -o "$file" "$@"
	expect_rc 0
}

# byte_at PID ADDR: the byte at ADDR of PID's memory, two hex digits.
byte_at() {
	dd if="/proc/$1/mem" bs=1 count=1 skip=$(($2)) iflag=skip_bytes 2>/dev/null | od -An -tx1 | tr -d ' '
}

# malloc_of PID: the address of the fixture's malloc.
malloc_of() { fix "$1" fn | awk '{ print $2 }'; }

# check_profile PID FILE: the leak first and right, the churn freed but
# counted as allocated, the early block absent.
check_profile() {
	local pid=$1 file=$2 secs truth inuse alloc leak churn
	secs=$(window_secs)
	[[ -n $secs ]] || fail "no window length in: $ERR"
	truth=$(awk -v s="$secs" -v r=$RATE 'BEGIN { printf "%d", s * r }')
	jm analyze "$file" --format json --pid "$pid"
	expect_rc 0
	inuse=$OUT
	jm analyze "$file" --format json --alloc-space --pid "$pid"
	expect_rc 0
	alloc=$OUT
	expect_eq "$(jq -r '.sites[0].name' <<<"$inuse")" leak_site
	leak=$(site "$inuse" leak_site)
	within "$leak" "$truth" $((truth * 15 / 100))
	churn=$(site "$inuse" churn_site)
	((churn * 20 < leak)) || fail "churn_site in use $churn >= 5% of leak_site's $leak"
	within "$(site "$alloc" churn_site)" "$truth" $((truth * 15 / 100))
	within "$(site "$alloc" leak_site)" "$truth" $((truth * 15 / 100))
	expect_eq "$(site "$alloc" early_block)" 0
}

t_leak_first_without_prof() {
	local pid
	can_sample
	start_fixture pid "$FIXTURES/leakfix"
	sample "$pid" "$TMPD/a.heap"
	expect_match "$(head -1 "$TMPD/a.heap")" '^heap_v2/16384$'
	grep -q '^MAPPED_LIBRARIES:$' "$TMPD/a.heap" || fail "no MAPPED_LIBRARIES"
	check_profile "$pid" "$TMPD/a.heap"
}

# Each version's own malloc and free, a prefixed one, one built with
# --disable-prof (where prof dump points to prof sample), a static _rjem_ copy.
t_versions_and_static_prefixed() {
	local v bin pid n=0
	can_sample
	for v in ${JE_VERSIONS:-4.5.0 5.2.1-je_ dev-295e489} 5.3.0-noprof static-rjem; do
		bin=$VERSIONS_DIR/$v/leakfix
		[[ $v == static-rjem ]] && bin=$FIXTURES/leakfix-static-rjem
		[[ -x $bin ]] || continue
		start_fixture pid "$bin"
		if [[ $v == *-noprof ]]; then
			jm "$pid" prof dump -o "$TMPD/no.heap"
			expect_rc 4
			expect_match "$ERR" 'built without --enable-prof.*prof sample SECONDS'
		fi
		sample "$pid" "$TMPD/$v.heap"
		check_profile "$pid" "$TMPD/$v.heap" || fail "on $v"
		n=$((n + 1))
	done
	((n > 1)) || skip "no jemalloc version builds under $VERSIONS_DIR: $(why_no_versions "$VERSIONS_DIR")"
}

# On a prof:true process the sampler and jemalloc's own profiler agree:
# prof window --sampler (at jemalloc's lg_prof_sample), then jemalloc's prof
# window, per site: the leak's bytes within 15% of the truth and 20% of each
# other, the churn freed in both, the early block in neither.  One after the
# other: while the sampler runs, its return probes stand in for return
# addresses on the stack, and jemalloc's own stacks end there (doc/sampler.md).
t_agrees_with_prof_true() {
	local pid truth own smp
	can_sample
	start_fixture pid "$FIXTURES/leakfix" MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:14
	jm "$pid" prof window 4 --sampler --max-overhead 0 -o "$TMPD/sw"
	expect_rc 0
	expect_match "$ERR" "1 in 2\^14 bytes"
	jm analyze "$TMPD/sw/window.heap" --format json --pid "$pid"
	expect_rc 0
	smp=$OUT
	jm "$pid" prof window 4 -o "$TMPD/pw"
	expect_rc 0
	jm analyze "$TMPD/pw/window.heap" --base "$TMPD/pw/base.heap" --format json --pid "$pid"
	expect_rc 0
	own=$OUT
	truth=$((RATE * 4))
	within "$(site "$own" leak_site)" "$truth" $((truth * 15 / 100))
	within "$(site "$smp" leak_site)" "$truth" $((truth * 15 / 100))
	within "$(site "$smp" leak_site)" "$(site "$own" leak_site)" $(($(site "$own" leak_site) / 5))
	(($(site "$own" churn_site) * 20 < truth)) || fail "churn_site in use in jemalloc's window: $own"
	(($(site "$smp" churn_site) * 20 < truth)) || fail "churn_site in use in the sampler's window: $smp"
	expect_eq "$(site "$smp" early_block)" 0
	expect_eq "$(site "$own" early_block)" 0
}

# redis_load PORT VAR: redis-benchmark's SET/GET of random keys on PORT in the
# background (its pid in VAR), given a second to start.  300000 keys first, so
# that the key table (524288 buckets then) does not grow during the windows:
# a table's growth is one lump of megabytes that one window has and another not.
redis_load() {
	expect_eq "$(redis-cli -p "$1" debug populate 300000 pre 100)" OK
	start_bg "$2" sh -c "exec redis-benchmark -p $1 -q -n 100000000 -r 1000000 -t set,get -d 200 >/dev/null 2>&1"
	sleep 1
}

# top_sites JSON MIN: the sites holding MIN% or more of an analyze --format
# json report's bytes, the largest first, one a line.
top_sites() {
	jq -r --argjson m "$2" '(.sites | map(.flat) | add) as $t
		| .sites | sort_by(-.flat)[] | select($t > 0 and .flat * 100 >= $t * $m) | .name' <<<"$1"
}

# Debian's Redis (no prof:true) under redis-benchmark: the sampler names the
# sites that grew as jemalloc's own profiler does on a prof:true Redis under
# the same load (the top one the same; each holding 5% of the sampler's
# bytes holds 2% of jemalloc's); complete stacks from copied stacks and the
# CFI (no frame pointers): at least 90% of the sampled bytes in stacks of 4
# frames or more, and through Redis's event loop.  --slow-paths finds the
# same top site.
t_redis_same_sites_as_prof_true() {
	local pid bpid deep in_loop ours theirs slow s
	can_sample
	command -v redis-benchmark >/dev/null || skip "no redis-benchmark"
	start_redis pid
	redis_load "$REDIS_PORT" bpid
	jm "$pid" prof sample 3 --lg-sample 12 --max-overhead 0 -o "$TMPD/redis.heap"
	expect_rc 0
	jm "$pid" prof sample 3 --slow-paths --lg-sample 12 --max-overhead 0 -o "$TMPD/redis-slow.heap"
	expect_rc 0
	kill "$bpid"
	jm analyze "$TMPD/redis-slow.heap" --format json --pid "$pid"
	expect_rc 0
	slow=$(top_sites "$OUT" 5)
	# Bytes in stacks of 4+ frames, of all: from the raw profile's t* lines.
	deep=$(awk '/^@/ { n = NF - 1; next } /^  t\*:/ && n { split($5, b, "]"); t += b[1]; if (n >= 4) d += b[1]; n = 0 }
		END { printf "%d %d", d * 100, t * 90 }' "$TMPD/redis.heap")
	(( ${deep% *} >= ${deep#* } && ${deep#* } > 0 )) || fail "bytes x100 in deep stacks vs 90% of all: $deep"
	jm analyze "$TMPD/redis.heap" --format collapsed --alloc-space --pid "$pid"
	expect_rc 0
	in_loop=$(awk '{ t += $NF; if ($1 ~ /;aeMain;/) a += $NF } END { printf "%d %d", a * 100, t * 90 }' <<<"$OUT")
	(( ${in_loop% *} >= ${in_loop#* } && ${in_loop#* } > 0 )) || fail "bytes through aeMain: $in_loop"
	jm analyze "$TMPD/redis.heap" --format json --pid "$pid"
	expect_rc 0
	ours=$(top_sites "$OUT" 5)

	start_redis pid MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:12
	redis_load "$REDIS_PORT" bpid
	jm "$pid" prof window 3 -o "$TMPD/rw"
	expect_rc 0
	kill "$bpid"
	jm analyze "$TMPD/rw/window.heap" --base "$TMPD/rw/base.heap" --format json --pid "$pid"
	expect_rc 0
	theirs=$(top_sites "$OUT" 2)
	[[ -n $ours && ${ours%%$'\n'*} == "${theirs%%$'\n'*}" ]] ||
		fail "top sites: sampler [${ours//$'\n'/ }], prof:true [${theirs//$'\n'/ }]"
	while read -r s; do
		grep -qxF "$s" <<<"$theirs" || fail "$s: 5% of the sampler's bytes, under 2% of prof:true's [${theirs//$'\n'/ }]"
	done <<<"$ours"
	# --slow-paths (jemalloc's counter on Debian's 5.3): Redis's allocations do
	# not repeat in step with its 64 KiB events, and the top site is the same.
	[[ -n $slow && ${slow%%$'\n'*} == "${theirs%%$'\n'*}" ]] ||
		fail "top sites: --slow-paths [${slow//$'\n'/ }], prof:true [${theirs//$'\n'/ }]"
}

t_alloc_only() {
	local pid truth
	can_sample
	start_fixture pid "$FIXTURES/leakfix"
	sample "$pid" "$TMPD/o.heap" --alloc-only
	expect_match "$ERR" 'allocations only'
	truth=$(awk -v s="$(window_secs)" -v r=$RATE 'BEGIN { printf "%d", s * r }')
	jm analyze "$TMPD/o.heap" --format json --alloc-space --pid "$pid"
	expect_rc 0
	within "$(site "$OUT" leak_site)" "$truth" $((truth * 15 / 100))
	within "$(site "$OUT" churn_site)" "$truth" $((truth * 15 / 100))
}

# --slow-paths on jemalloc 5.3+ (Debian's, dev, a static _rjem_ copy):
# jemalloc's own counter read at each thread event, so the window's total is
# the truth (both sites' bytes), though only the slow paths trap.  Which site
# gets them follows jemalloc's 64 KiB event schedule (not asserted: on this
# fixture's strict leak/churn alternation every event lands on one site).
t_slow_paths_counted_total() {
	local v bin pid truth hits
	can_sample
	for v in debian dev-295e489 static-rjem; do
		bin=$VERSIONS_DIR/$v/leakfix
		[[ $v == debian ]] && bin=$FIXTURES/leakfix
		[[ $v == static-rjem ]] && bin=$FIXTURES/leakfix-static-rjem
		[[ -x $bin ]] || continue
		start_fixture pid "$bin"
		sample "$pid" "$TMPD/c-$v.heap" --alloc-only --slow-paths
		expect_match "$ERR" "each of jemalloc's thread events stands for the bytes it counted"
		truth=$(awk -v s="$(window_secs)" -v r=$RATE 'BEGIN { printf "%d", 2 * s * r }')
		# Fewer traps than calls: about one per 64 KiB (and cache misses), not
		# one per 4 KiB block.
		hits=$(sed -n 's/.* probes: \([0-9]*\) hits.*/\1/p' <<<"$ERR")
		jm analyze "$TMPD/c-$v.heap" --format json --alloc-space --pid "$pid"
		expect_rc 0
		within "$(jq '[.sites[] | select(.name == "leak_site" or .name == "churn_site") | .flat] | add | floor' <<<"$OUT")" \
			"$truth" $((truth * 15 / 100)) || fail "on $v"
		((hits > 0 && hits * 4 < truth / 4096)) || fail "$hits hits for $((truth / 4096)) allocations on $v"
	done
}

# The probes are in the target only: a second process of the same library
# keeps its code bytes and its speed.
t_other_process_untouched() {
	local a b addr baddr orig before during jpid
	can_sample
	start_fixture a "$FIXTURES/leakfix"
	start_fixture b "$FIXTURES/leakfix"
	addr=$(malloc_of "$a")
	baddr=$(malloc_of "$b")
	orig=$(byte_at "$b" "$baddr")
	expect_eq "$(byte_at "$a" "$addr")" "$orig"	# the same library file
	before=$(fix "$b" "time 200000" | awk '{ printf "%d", $2 }')
	start_bg jpid "$JEMATTACH" "$a" prof sample 30 --max-overhead 0 -o "$TMPD/u.heap" >/dev/null 2>&1
	for _ in $(seq 300); do [[ $(byte_at "$a" "$addr") == "$BRK" ]] && break; sleep 0.1; done
	expect_eq "$(byte_at "$a" "$addr")" "$BRK"		# the probe is there, in a
	expect_eq "$(byte_at "$b" "$baddr")" "$orig"	# and not in b
	during=$(fix "$b" "time 200000" | awk '{ printf "%d", $2 }')
	# A probe costs microseconds a call; noise on a shared machine, a few times 10 ns.
	((during < before * 5 + 200)) || fail "b slowed from $before to $during ns a pair"
	kill -INT "$jpid"
	wait "$jpid" || fail "jemattach ended with $?"
	expect_eq "$(byte_at "$a" "$addr")" "$orig"
}

t_sigkill_leaves_no_breakpoint() {
	local pid addr orig jpid i
	can_sample
	start_fixture pid "$FIXTURES/leakfix"
	addr=$(malloc_of "$pid")
	orig=$(byte_at "$pid" "$addr")
	[[ $orig != "$BRK" ]] || fail "malloc starts with the breakpoint ($BRK) before any probe"
	for i in $(seq "$KILLS"); do
		start_bg jpid "$JEMATTACH" "$pid" prof sample 60 --max-overhead 0 -o "$TMPD/k.heap" >/dev/null 2>&1
		# At a random moment once the probes are in (up to 30 s on a loaded
		# machine): 0-0.5 s after the first.
		for _ in $(seq 300); do [[ $(byte_at "$pid" "$addr") == "$BRK" ]] && break; sleep 0.1; done
		expect_eq "$(byte_at "$pid" "$addr")" "$BRK"
		sleep "0.$((RANDOM % 5))"
		kill -KILL "$jpid"
		wait "$jpid" 2>/dev/null || true	# its descriptors are closed by then
		expect_eq "$(byte_at "$pid" "$addr")" "$orig" || fail "kill $i left a breakpoint"
		[[ $(fix "$pid" rate) == "leak $RATE churn $RATE" ]] || fail "the target stopped answering"
	done
}

t_target_exits_mid_window() {
	local pid jpid
	can_sample
	start_fixture pid "$FIXTURES/leakfix"
	start_bg jpid bash -c "exec '$JEMATTACH' $pid prof sample 60 --max-overhead 0 -o '$TMPD/x.heap' >/dev/null 2>'$TMPD/x.err'"
	sleep 3
	echo exit >&"${FIX_IN[$pid]}"
	wait "$jpid" || fail "jemattach ended with $? after the target's exit: $(cat "$TMPD/x.err")"
	expect_match "$(cat "$TMPD/x.err")" 'the process exited after [0-9.]+ s; the profile holds the samples so far'
	grep -q '^MAPPED_LIBRARIES:$' "$TMPD/x.heap" || fail "no profile written"
}

# Threads made during the window are sampled; a forked child runs through the
# breakpoints it inherited (the kernel removes them) and is not sampled; an
# exec ends the window with the profile so far.
t_threads_fork_exec_during_window() {
	local pid jpid addr
	can_sample
	start_fixture pid "$FIXTURES/leakfix"
	addr=$(malloc_of "$pid")
	start_bg jpid bash -c "exec '$JEMATTACH' $pid prof sample 60 ${SAMPLE[*]} -o '$TMPD/t.heap' \
		>/dev/null 2>'$TMPD/t.err'"
	for _ in $(seq 300); do [[ $(byte_at "$pid" "$addr") == "$BRK" ]] && break; sleep 0.1; done
	expect_eq "$(byte_at "$pid" "$addr")" "$BRK"
	sleep 1
	expect_eq "$(fix "$pid" "threads 16")" ok
	expect_eq "$(fix "$pid" fork)" "child 0"
	expect_eq "$(fix "$pid" exec)" ready
	wait "$jpid" || fail "jemattach ended with $?: $(cat "$TMPD/t.err")"
	expect_match "$(cat "$TMPD/t.err")" 'executed another program'
	jm analyze "$TMPD/t.heap" --format json --alloc-space
	expect_rc 0
	# A loaded machine can let the burst of 16 MiB fill the ring buffer: the
	# samples dropped are counted ("N lost"), each standing for ~18.5 KiB of
	# 4 KiB blocks at 2^14 (4096 / (1 - e^-0.25)); counted in, the total holds.
	local got lost
	got=$(site "$OUT" thread_site)
	lost=$(sed -n 's/.* samples (\([0-9]*\) lost).*/\1/p' "$TMPD/t.err")
	[[ $lost ]] || fail "no lost count in: $(cat "$TMPD/t.err")"
	((lost)) && echo "    ($lost samples lost: $got bytes + up to $((lost * 18940)))" >&2
	((got <= (16 << 20) * 115 / 100 && got + lost * 18940 >= (16 << 20) * 85 / 100)) ||
		fail "thread_site $got bytes ($lost samples lost) for $((16 << 20))"
	expect_eq "$(fix "$pid" rate)" "leak $RATE churn $RATE"
}

# prof window --sampler: the window, then frees followed as long again; the
# churn freed by then, the leak in use.
t_window_with_sampler() {
	local pid
	can_sample
	start_fixture pid "$FIXTURES/leakfix"
	jm "$pid" prof window 3 --sampler --max-overhead 0 -o "$TMPD/w" --top 3
	expect_rc 0
	expect_match "$ERR" 'then following frees for 3 s'
	expect_match "$OUT" $'allocation sites that grew during the window[^\n]*\nTotal: [0-9.]+ MB\n +[0-9.]+ +[0-9.]+% +[0-9.]+% +[0-9.]+ +[0-9.]+% leak_site'
	expect_eq "$(ls "$TMPD/w")" window.heap
}

t_max_overhead_ends_early() {
	local pid share secs
	can_sample
	start_fixture pid "$FIXTURES/leakfix"
	jm "$pid" prof sample 30 --max-overhead 1 -o "$TMPD/m.heap"
	expect_rc 0
	expect_match "$ERR" "ended early: the probes' cost passed --max-overhead"
	# The cost shown: the hits, and their share of the target's CPU past 1%.
	expect_match "$ERR" 'probes: [1-9][0-9]* hits'
	share=$(sed -n 's/.*cost to the process: ~[0-9.]* s of its [0-9.]* s CPU (\([0-9.]*\)%.*/\1/p' <<<"$ERR")
	[[ -n $share ]] && awk -v s="$share" 'BEGIN { exit !(s > 1) }' || fail "share ${share:-none} in: $ERR"
	secs=$(window_secs)
	awk -v s="$secs" 'BEGIN { exit !(s < 30) }' || fail "ran $secs s"
	grep -q '^MAPPED_LIBRARIES:$' "$TMPD/m.heap" || fail "no profile written"
}

t_refused_without_capabilities() {
	local pid
	can_sample
	command -v capsh >/dev/null || skip "no capsh"
	start_fixture pid "$FIXTURES/leakfix"
	jm_run capsh --drop=cap_bpf,cap_perfmon,cap_sys_admin -- -c \
		"exec '$JEMATTACH' $pid prof sample 2 -o '$TMPD/refused.heap'"
	expect_rc 4
	expect_match "$ERR" 'needs root, or CAP_BPF and CAP_PERFMON'
	expect_match "$ERR" 'MALLOC_CONF=prof:true'
	[[ ! -e $TMPD/refused.heap ]] || fail "a profile was written"
}

# CAP_BPF and CAP_PERFMON without CAP_SYS_ADMIN: the files by their path in the
# target's root (map_files cannot be followed), no run-time statistics (said).
t_without_cap_sys_admin() {
	local pid kmaj kmin
	can_sample
	command -v capsh >/dev/null || skip "no capsh"
	# Without uprobe_multi (kernel 6.6) each uprobe is a perf event, which
	# Debian 12's 6.1 opens only with CAP_SYS_ADMIN (EACCES in the arm64 guest).
	IFS=. read -r kmaj kmin _ <<<"$(uname -r)"
	((kmaj > 6 || (kmaj == 6 && kmin >= 6))) ||
		skip "kernel $(uname -r) has no uprobe_multi: its perf-event uprobes need CAP_SYS_ADMIN"
	start_fixture pid "$FIXTURES/leakfix"
	jm_run capsh --drop=cap_sys_admin,cap_checkpoint_restore -- -c \
		"exec '$JEMATTACH' $pid prof sample $SECS ${SAMPLE[*]} -o '$TMPD/n.heap'"
	expect_rc 0
	expect_match "$ERR" 'probe hits not counted'
	check_profile "$pid" "$TMPD/n.heap"
}

t_usage_errors() {
	local pid
	start_fixture pid "$FIXTURES/leakfix"
	jm "$pid" prof sample
	expect_rc 2
	jm "$pid" prof sample 0
	expect_rc 2
	jm "$pid" prof sample 5 --lg-sample 99
	expect_rc 2
	jm "$pid" prof sample 5 --analyze -o -
	expect_rc 2
	expect_match "$ERR" 'needs the profile in a file'
}

run_tests
