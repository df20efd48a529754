#!/bin/bash
# 10-basic.sh -- info/get/set against fixtures linked with Debian's libjemalloc,
# and a stock program under LD_PRELOAD; values are checked against the target's own.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

t_info_names_module_version_and_thread() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	jm "$pid" info
	expect_rc 0
	expect_match "$OUT" "version +$(fix "$pid" "get s version")"
	expect_match "$OUT" "module +/.*libjemalloc\.so\.2 \(shared, no prefix\)"
	expect_match "$OUT" "call thread +$pid \(jemfix\), asleep in read"
	expect_match "$OUT" "opt.prof +false"
	expect_match "$OUT" "arenas.narenas +$(fix "$pid" "get u arenas.narenas")"
	jm "$pid" info --json
	expect_rc 0
	expect_eq "$(jq -r '.version' <<<"$OUT")" "$(fix "$pid" "get s version")"
	expect_eq "$(jq -r '.thread.tid' <<<"$OUT")" "$pid"
}

t_get_matches_target_own_values() {
	local pid before
	start_fixture pid "$FIXTURES/jemfix"
	fix "$pid" "alloc 1000 1000" >/dev/null
	before=$(proc_state "$pid")
	jm "$pid" get stats.allocated
	expect_rc 0
	# The fixture is idle between the two reads: the numbers agree exactly.
	expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
	jm "$pid" get stats.active stats.resident opt.narenas arenas.page opt.dirty_decay_ms
	expect_rc 0
	expect_eq "$(sed -n 1p <<<"$OUT")" "stats.active $(fix "$pid" "get z stats.active")"
	expect_eq "$(sed -n 3p <<<"$OUT")" "opt.narenas $(fix "$pid" "get u opt.narenas")"
	expect_eq "$(sed -n 4p <<<"$OUT")" "arenas.page $(fix "$pid" "get z arenas.page")"
	expect_eq "$(sed -n 5p <<<"$OUT")" "opt.dirty_decay_ms $(fix "$pid" "get zs opt.dirty_decay_ms")"
	# Maps, fds and the working directory are as they were; the target is intact.
	expect_state "$pid" "$before"
	expect_eq "$(fix "$pid" check)" ok
}

# The live path loads only what it uses (README, Speed): never the debuginfod
# client, which libdw loads on a failed debuginfo search (a stripped static
# copy makes one), nor unicorn, which only --emulate needs.  The loader lists
# every object it maps, dlopen'ed ones too; --emulate shows the list would
# name one.
expect_loaded_neither() {
	[[ $ERR != *libdebuginfod* && $ERR != *libunicorn* ]] ||
		fail "$1 loaded: $(grep -o 'file=[^ ]*' <<<"$ERR" | sort -u | tr '\n' ' ')"
}
t_live_commands_load_neither_debuginfod_nor_unicorn() {
	local pid stripped
	start_fixture pid "$FIXTURES/jemfix"
	start_fixture stripped "$FIXTURES/jemfix-static-stripped"
	local -x LD_DEBUG=files
	jm "$pid" get stats.allocated
	expect_rc 0
	expect_loaded_neither get
	jm "$stripped" get stats.allocated
	expect_rc 4
	expect_loaded_neither "a miss"
	jm --emulate "$pid" get stats.allocated
	expect_rc 0
	expect_match "$ERR" "file=libunicorn"
}

t_get_json_is_one_object() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	jm "$pid" get --json stats.allocated version config.prof opt.prof_prefix
	expect_rc 0
	expect_eq "$(jq -r '."stats.allocated"' <<<"$OUT")" "$(fix "$pid" "get z stats.allocated")"
	expect_eq "$(jq -r '."config.prof"' <<<"$OUT")" "true"
	expect_eq "$(jq -r '."opt.prof_prefix"' <<<"$OUT")" "$(fix "$pid" "get s opt.prof_prefix")"
}

t_get_unknown_name_is_probed() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	# Not in our table: its size is probed (EINVAL length behaviour).
	jm "$pid" get stats.arenas.0.pactive arenas.bin.0.size opt.thp
	expect_rc 0
	expect_eq "$(sed -n 2p <<<"$OUT")" "arenas.bin.0.size $(fix "$pid" "get z arenas.bin.0.size")"
	expect_eq "$(sed -n 3p <<<"$OUT")" "opt.thp $(fix "$pid" "get s opt.thp")"
}

t_set_writes_and_prints_old_new() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	jm "$pid" set arenas.dirty_decay_ms 5000
	expect_rc 0
	expect_eq "$OUT" "10000 -> 5000"
	expect_eq "$(fix "$pid" "get zs arenas.dirty_decay_ms")" 5000
	# A negative value is a value, not an option.
	jm "$pid" set arena.0.dirty_decay_ms -1
	expect_rc 0
	expect_eq "$OUT" "10000 -> -1"
	jm "$pid" set background_thread false
	expect_rc 0
	expect_eq "$OUT" "false -> false"
}

t_set_prof_active_and_string_dump() {
	local pid dir
	start_fixture pid "$FIXTURES/jemfix" MALLOC_CONF=prof:true,prof_active:false
	jm "$pid" set prof.active true
	expect_rc 0
	expect_eq "$OUT" "false -> true"
	expect_eq "$(fix "$pid" "get b prof.active")" true
	# A string value is placed in the target's scratch memory.
	dir=$(fix_cwd "$pid")
	jm "$pid" set prof.dump "$TMPD/set.heap"
	expect_rc 0
	expect_match "$(head -1 "$TMPD/set.heap")" "^heap_v2/"
	expect_eq "$(ls -A "$dir")" ""
}

t_set_errors_name_the_errno() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	jm "$pid" set prof.active true
	expect_rc 1
	expect_match "$ERR" "ENOENT: profiling is not available"
	jm "$pid" get no.such.name
	expect_rc 1
	expect_match "$ERR" 'mallctl\("no.such.name"\): ENOENT: no such mallctl name'
	jm "$pid" set stats.allocated 5
	expect_rc 1
	expect_match "$ERR" "EPERM"
	jm "$pid" set prof.active maybe
	expect_rc 2
	expect_match "$ERR" 'invalid bool value "maybe"'
	expect_eq "$(fix "$pid" ping)" pong
}

t_ld_preload_stock_program() {
	local pid
	# A stock program that never heard of jemalloc, blocked in read.
	mkfifo "$TMPD/cat.in"
	start_bg pid env LD_PRELOAD=libjemalloc.so.2 sh -c 'exec cat "$0" >/dev/null' "$TMPD/cat.in"
	exec {keep}>"$TMPD/cat.in"
	for _ in $(seq 50); do grep -q libjemalloc "/proc/$pid/maps" 2>/dev/null && break; sleep 0.05; done
	jm "$pid" info
	expect_rc 0
	expect_match "$OUT" "module +/.*libjemalloc\.so\.2"
	expect_match "$OUT" "call thread +$pid \(cat\)"
	jm "$pid" get stats.allocated
	expect_rc 0
	(( OUT > 0 )) || fail "stats.allocated $OUT"
	echo hello >&"$keep"
	exec {keep}>&-
	wait "$pid"
	expect_eq "$?" 0
}

run_tests
