#!/bin/bash
# 55-core.sh -- jemattach core: jemalloc's code emulated on ELF cores (gcore
# and kernel cores) gives the live process's numbers and heap profile; bad
# cores are refused clearly.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

PROF=MALLOC_CONF=prof:true
# Emulated stats and profiles: seconds where unicorn itself runs under TCG (the
# arm64 guest), so a generous limit (a hang still shows as a timeout).
SLOW=(--timeout 120)

# gcore_of PID OUT: a gcore of PID at OUT (the process continues).
gcore_of() {
	gcore -o "$2.tmp" "$1" >/dev/null 2>&1 || fail "gcore $1 failed"
	mv "$2.tmp.$1" "$2"
}

# Top sites of a heap profile, symbolized from the mappings it lists.
top_sites() { "$JEMATTACH" analyze "$1" --top 5 2>/dev/null; }

t_gcore_same_as_live() {
	local pid bin live prof
	for bin in jemfix jemfix-static jemfix-static-je jemfix-static-rjem; do
		# One sample per 64 KiB: at the default 512 KiB the 2 MB below
		# expects 4 samples, and a run with none in main was seen.
		start_fixture pid "$FIXTURES/$bin" $PROF,lg_prof_sample:16
		fix "$pid" "alloc 300 7000" >/dev/null
		jm "$pid" get stats.allocated
		expect_rc 0
		live=$OUT
		jm "$pid" get config.prof
		expect_rc 0
		# Debian's arm64 libjemalloc_pic.a, which the static fixtures link, has
		# no profiling (the dynamic ones use the guest's prof build): their
		# profiles are compared on x86_64 only.
		prof=1
		if [[ $OUT == false && $(uname -m) != x86_64 ]]; then
			echo "    ($bin: its jemalloc has no profiling on $(uname -m): no profile compared)" >&2
			prof=
		fi
		[[ -z $prof ]] || { jm "$pid" prof dump -o "$TMPD/live.heap"; expect_rc 0; }
		gcore_of "$pid" "$TMPD/$bin.core"
		# $DEBUGINFOD_URLS alone never brings the network in (the loader
		# tells whether libdw loaded its debuginfod client).
		jm_run env DEBUGINFOD_URLS=http://127.0.0.1:9 LD_DEBUG=libs "$JEMATTACH" core "$TMPD/$bin.core" get stats.allocated
		expect_rc 0
		[[ $OUT == "$live" ]] || fail "$bin: core says $OUT, the live process $live"
		[[ $ERR != *libdebuginfod.so* ]] || fail "$bin: core loaded the debuginfod client"
		jm "${SLOW[@]}" core "$TMPD/$bin.core" stats --json
		expect_rc 0
		jq -e .jemalloc.stats.allocated <<<"$OUT" >/dev/null || fail "$bin: no stats JSON"
		[[ -n $prof ]] || continue
		jm "${SLOW[@]}" core "$TMPD/$bin.core" prof dump -o "$TMPD/core.heap"
		expect_rc 0
		[[ $(top_sites "$TMPD/core.heap") == "$(top_sites "$TMPD/live.heap")" ]] ||
			fail "$bin: the core's top sites differ from the live dump's"
		top_sites "$TMPD/core.heap" | grep -q main || fail "$bin: main not among the top sites"
	done
}

t_gcore_redis() {
	local pid live name
	start_redis pid $PROF
	expect_eq "$(redis-cli -p "$REDIS_PORT" debug populate 20000 key 300)" OK
	jm "$pid" get stats.allocated
	expect_rc 0
	live=$OUT
	jm "$pid" prof dump -o "$TMPD/live.heap"
	expect_rc 0
	jm "$pid" info
	expect_rc 0
	name=$(awk '/^process / { print $3; exit }' <<<"$OUT")
	expect_eq "$name" "(redis-server),"
	gcore_of "$pid" "$TMPD/redis.core"
	jm core "$TMPD/redis.core" get stats.allocated
	expect_rc 0
	expect_eq "$OUT" "$live"
	# Redis rewrote its command line ("redis-server 127.0.0.1:PORT"), which gcore
	# takes its name from: the core's name is the one live info shows.
	[[ $(tr '\0' ' ' <"/proc/$pid/cmdline") == "redis-server 127.0.0.1:$REDIS_PORT"* ]] ||
		fail "redis did not rewrite its command line: the test shows nothing"
	jm core "$TMPD/redis.core" info
	expect_rc 0
	expect_eq "$(awk '/^process / { print $3; exit }' <<<"$OUT")" "$name"
	jm "${SLOW[@]}" core "$TMPD/redis.core" "$(readlink "/proc/$pid/exe")" prof dump -o "$TMPD/core.heap"
	expect_rc 0
	[[ $(top_sites "$TMPD/core.heap") == "$(top_sites "$TMPD/live.heap")" ]] ||
		fail "redis: the core's top sites differ from the live dump's"
	[[ -n $(top_sites "$TMPD/core.heap") ]] || fail "redis: no sites in the core's profile"
}

# A kernel core of a process killed by SIGABRT while a thread held jemalloc's
# prof dump lock.
t_kernel_core_abrt_in_held_lock() {
	local pid cwd v pattern
	pattern=$(cat /proc/sys/kernel/core_pattern)
	if [[ $pattern == \|* || $pattern == /* ]]; then
		skip "core_pattern is '$pattern': kernel cores do not land in the cwd"
	fi
	ulimit -c unlimited
	start_fixture pid "$FIXTURES/jemfix" $PROF
	fix "$pid" "alloc 500 3000" >/dev/null
	cwd=$(fix_cwd "$pid")
	mkfifo "$TMPD/fifo"
	expect_eq "$(fix "$pid" "dump $TMPD/fifo")" ok
	sleep 0.3
	jm --emulate "$pid" get stats.allocated
	expect_rc 0
	v=$OUT
	kill -ABRT "$pid"
	wait "$pid" 2>/dev/null || true
	local core
	core=$(ls "$cwd"/core* 2>/dev/null | head -1)
	[[ -n $core ]] || fail "no kernel core in $cwd (core_pattern '$pattern')"
	jm core "$core" get stats.allocated
	expect_rc 0
	expect_eq "$OUT" "$v"
	jm "${SLOW[@]}" core "$core" prof dump -o -
	expect_rc 0
	expect_match "$OUT" "^heap_v2/"
	jm core "$core" info
	expect_rc 0
	expect_match "$OUT" "jemfix"
}

t_bad_cores() {
	local pid
	echo "not a core" >"$TMPD/text"
	jm core "$TMPD/text" get stats.allocated
	expect_rc 2
	expect_match "$ERR" "not an ELF file"
	jm core "$FIXTURES/jemfix" get stats.allocated
	expect_rc 2
	expect_match "$ERR" "not a core"
	jm core "$TMPD/nonexistent" get stats.allocated
	expect_rc 2
	start_fixture pid "$FIXTURES/jemfix"
	gcore_of "$pid" "$TMPD/good.core"
	head -c 1000000 "$TMPD/good.core" >"$TMPD/trunc.core"
	jm core "$TMPD/trunc.core" get stats.allocated
	expect_rc 4
	expect_match "$ERR" "truncated"
	# e_machine of another architecture: arm64 (183) on x86_64, x86_64 (62) elsewhere.
	cp "$TMPD/good.core" "$TMPD/other.core"
	if [[ $(uname -m) == x86_64 ]]; then printf '\xb7'; else printf '\x3e'; fi |
		dd of="$TMPD/other.core" bs=1 seek=18 conv=notrunc 2>/dev/null
	jm core "$TMPD/other.core" get stats.allocated
	expect_rc 4
	expect_match "$ERR" "architecture"
	jm core "$TMPD/good.core" set prof.active true
	expect_rc 2
	jm core "$TMPD/good.core" threads
	expect_rc 2
	expect_match "$ERR" "live process"
}

# Files the core omitted: from their paths, from --sysroot, never a different file.
t_missing_and_moved_files() {
	local pid exe="$TMPD/bin/jemfix-static"
	mkdir -p "$TMPD/bin" "$TMPD/root$TMPD/bin"
	cp "$FIXTURES/jemfix-static" "$exe"
	start_fixture pid "$exe"
	jm "$pid" get stats.allocated
	local live=$OUT
	gcore_of "$pid" "$TMPD/s.core"
	mv "$exe" "$TMPD/root$TMPD/bin/"
	jm core "$TMPD/s.core" get stats.allocated
	expect_rc 4
	expect_match "$ERR" "$exe is missing"
	jm core --sysroot "$TMPD/root" "$TMPD/s.core" get stats.allocated
	expect_rc 0
	expect_eq "$OUT" "$live"
	cp "$FIXTURES/jemfix-static-je" "$exe"
	jm core "$TMPD/s.core" get stats.allocated
	expect_rc 4
	expect_match "$ERR" "build-id differs"
}

run_tests
