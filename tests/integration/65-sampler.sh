#!/bin/bash
# 65-sampler.sh -- `prof sample`: heap profiles of a process started without
# prof:true, by per-process uprobes and eBPF.  The leakfix fixture knows its
# truth (a 2.5 MiB/s leak in leak_site, as much churn in churn_site, an 8 MiB
# block from before the window); the safety tests read the probed code's
# bytes through /proc/PID/mem (a uprobe is a 0xcc there while it is in place).
# runner: long (light files run beside it: its windows wait on the clock, and leakfix keeps its rate by the clock)
source tests/lib.sh

RATE=2621440			# leakfix's bytes a second, per site
SECS=${SAMPLER_SECS:-5}
KILLS=${SAMPLER_KILLS:-20}
VERSIONS_DIR=$(dirname "$FIXTURES")/versions
# lg_sample 14: about 1400 samples in 5 s, so a 15% bound is several standard
# errors wide (at jemalloc's 19, 5 s of this leak is 25 samples: +-20%).
SAMPLE=(--lg-sample 14 --max-overhead 0)

can_sample() {
	[[ $(id -u) == 0 ]] || skip "not root"
	[[ -d /sys/bus/event_source/devices/uprobe ]] || skip "kernel without uprobes"
}

# sample PID FILE ARGS...: a window of $SECS s into FILE.
sample() {
	local pid=$1 file=$2; shift 2
	jm "$pid" prof sample "$SECS" "${SAMPLE[@]}" -o "$file" "$@"
	expect_rc 0
}

# window_secs: the window's length from the summary jemattach printed.
window_secs() { sed -n 's/^jemattach: \([0-9.]*\) s, [0-9]* probes.*/\1/p' <<<"$ERR"; }

# site JSON NAME: a site's flat bytes in an analyze --format json report (0: absent).
site() { jq -r --arg n "$2" '[.sites[] | select(.name == $n) | .flat] | (.[0] // 0) | floor' <<<"$1"; }

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
	((n > 1)) || skip "no jemalloc version builds (make versions)"
}

# On a prof:true process the sampler and jemalloc's own window both find the
# leak's bytes (each within 15% of the truth).
t_agrees_with_prof_true() {
	local pid truth
	can_sample
	start_fixture pid "$FIXTURES/leakfix" MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:14
	sample "$pid" "$TMPD/p.heap"
	check_profile "$pid" "$TMPD/p.heap"
	jm "$pid" prof window 4 -o "$TMPD/pw"
	expect_rc 0
	jm analyze "$TMPD/pw/window.heap" --base "$TMPD/pw/base.heap" --format json --pid "$pid"
	expect_rc 0
	truth=$((RATE * 4))
	within "$(site "$OUT" leak_site)" "$truth" $((truth * 15 / 100))
}

# Debian's Redis (no prof:true) under redis-benchmark: complete stacks from
# copied stacks and the CFI (no frame pointers): at least 90% of the sampled
# bytes in stacks of 4 frames or more, and through Redis's event loop.
t_redis_stacks_reach_redis_code() {
	local pid bpid deep in_loop
	can_sample
	command -v redis-benchmark >/dev/null || skip "no redis-benchmark"
	start_redis pid
	start_bg bpid sh -c "exec redis-benchmark -p $REDIS_PORT -q -n 100000000 -t set,get -d 200 >/dev/null 2>&1"
	sleep 1
	jm "$pid" prof sample 3 "${SAMPLE[@]}" -o "$TMPD/redis.heap"
	expect_rc 0
	kill "$bpid"
	# Bytes in stacks of 4+ frames, of all: from the raw profile's t* lines.
	deep=$(awk '/^@/ { n = NF - 1; next } /^  t\*:/ && n { split($5, b, "]"); t += b[1]; if (n >= 4) d += b[1]; n = 0 }
		END { printf "%d %d", d * 100, t * 90 }' "$TMPD/redis.heap")
	(( ${deep% *} >= ${deep#* } && ${deep#* } > 0 )) || fail "bytes x100 in deep stacks vs 90% of all: $deep"
	jm analyze "$TMPD/redis.heap" --format collapsed --alloc-space --pid "$pid"
	expect_rc 0
	in_loop=$(awk '{ t += $NF; if ($1 ~ /;aeMain;/) a += $NF } END { printf "%d %d", a * 100, t * 90 }' <<<"$OUT")
	(( ${in_loop% *} >= ${in_loop#* } && ${in_loop#* } > 0 )) || fail "bytes through aeMain: $in_loop"
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
	for _ in $(seq 300); do [[ $(byte_at "$a" "$addr") == cc ]] && break; sleep 0.1; done
	expect_eq "$(byte_at "$a" "$addr")" cc		# the probe is there, in a
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
	[[ $orig != cc ]] || fail "malloc starts with 0xcc before any probe"
	for i in $(seq "$KILLS"); do
		start_bg jpid "$JEMATTACH" "$pid" prof sample 60 --max-overhead 0 -o "$TMPD/k.heap" >/dev/null 2>&1
		# At a random moment once the probes are in (up to 30 s on a loaded
		# machine): 0-0.5 s after the first.
		for _ in $(seq 300); do [[ $(byte_at "$pid" "$addr") == cc ]] && break; sleep 0.1; done
		expect_eq "$(byte_at "$pid" "$addr")" cc
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
	for _ in $(seq 300); do [[ $(byte_at "$pid" "$addr") == cc ]] && break; sleep 0.1; done
	expect_eq "$(byte_at "$pid" "$addr")" cc
	sleep 1
	expect_eq "$(fix "$pid" "threads 16")" ok
	expect_eq "$(fix "$pid" fork)" "child 0"
	expect_eq "$(fix "$pid" exec)" ready
	wait "$jpid" || fail "jemattach ended with $?: $(cat "$TMPD/t.err")"
	expect_match "$(cat "$TMPD/t.err")" 'executed another program'
	jm analyze "$TMPD/t.heap" --format json --alloc-space
	expect_rc 0
	within "$(site "$OUT" thread_site)" $((16 << 20)) $(((16 << 20) * 15 / 100))
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
	local pid
	can_sample
	start_fixture pid "$FIXTURES/leakfix"
	jm "$pid" prof sample 30 --max-overhead 1 -o "$TMPD/m.heap"
	expect_rc 0
	expect_match "$ERR" "ended early: the probes' cost passed --max-overhead"
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
	local pid
	can_sample
	command -v capsh >/dev/null || skip "no capsh"
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
