#!/bin/bash
# 50-gdb.sh -- the gdb command library (gdb/jemalloc.gdb) driven by real gdb in batch
# mode, against fixtures and Debian's redis-server, checked against jemattach and against
# what the target itself reports.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

SCRIPT=$PWD/gdb/jemalloc.gdb
# What the issue promises; each must exist, be documented and be listed by "help jem".
COMMANDS=(jem-info jem-get jem-set jem-stats jem-prof-on jem-prof-off jem-prof-status
	jem-prof-dump jem-purge jem-prefix)

# gdbrun PID CMD...: one gdb, attached to PID in batch mode with the library sourced,
# running every CMD (gdb is slow to start, so tests batch their commands).  Each CMD's
# output is preceded by a line "@@ CMD" for gout.  Sets $GOUT, $GERR and $GRC (gdb's
# status: that of the last command).  Separate debug info (libc6-dbg, debuginfod) is
# turned off, as on most production machines: only .dynsym and the fixture's own.
gdbrun() {
	local pid=$1 c args=(-iex "set debug-file-directory /nonexistent" -iex "set debuginfod enabled off")
	shift
	[[ -n ${GDB_NO_CALLS:-} ]] || need_gdb_calls
	for c in "$@"; do args+=(-ex "echo @@ $c\n" -ex "$c"); done
	GRC=0
	GOUT=$(gdb -p "$pid" -batch -nx -x "$SCRIPT" "${args[@]}" 2>"$TMPD/gerr" </dev/null) || GRC=$?
	GERR=$(cat "$TMPD/gerr")
}

# gout CMD: what CMD printed in the last gdbrun.
gout() {
	awk -v m="@@ $1" '/^@@ / { on = ($0 == m); next } on && !/^\[Inferior / { print }' <<<"$GOUT"
}

# sections FILE: the headings of a malloc_stats_print text report.
sections() {
	grep -E '^(___ .* ___|--- .* ---|[A-Za-z][A-Za-z -]*:?|[a-z]+\[[0-9]+\]:)$' "$1"
}

# same_sections GDBFILE JEMATTACHFILE: both reports have the same headings, and those
# include the parts every report has.
same_sections() {
	local ours theirs
	ours=$(sections "$1")
	theirs=$(sections "$2")
	expect_eq "$ours" "$theirs"
	expect_match "$ours" "___ Begin jemalloc statistics ___"
	expect_match "$ours" "arenas\[0\]:"
	expect_match "$ours" "--- End jemalloc statistics ---"
}

t_script_has_no_python() {
	[[ -s $SCRIPT ]] || fail "$SCRIPT missing"
	! grep -in python "$SCRIPT" || fail "the gdb library mentions python"
}

t_help_lists_and_documents_every_command() {
	local c args=(-ex "echo @@ help jem\n" -ex "help jem") defined
	for c in "${COMMANDS[@]}"; do args+=(-ex "echo @@ help $c\n" -ex "help $c"); done
	# No process: the library must load, and document itself, before any attach.
	GOUT=$(gdb -batch -nx -x "$SCRIPT" "${args[@]}" 2>&1 </dev/null)
	for c in "${COMMANDS[@]}"; do
		grep -q "^  $c\b" <<<"$(gout "help jem")" || fail "help jem does not list $c"
		# gdb answers "User-defined." for a command without a document block.
		[[ $(gout "help $c") == "$c"* ]] || fail "help $c: $(gout "help $c")"
	done
	# Every public command in the file is in the list above, so none goes untested.
	defined=$(sed -nE 's/^define (jem-[a-z][a-z-]*)$/\1/p' "$SCRIPT" | sort)
	expect_eq "$defined" "$(printf '%s\n' "${COMMANDS[@]}" | sort)"
}

# script_found_from BIN SCRIPT: a copy of jemattach at BIN, next to a copy of the
# library at SCRIPT, prints SCRIPT for --gdb-script.
script_found_from() {
	mkdir -p "$(dirname "$1")" "$(dirname "$2")"
	cp "$JEMATTACH" "$1"
	cp "$SCRIPT" "$2"
	expect_eq "$("$1" --gdb-script)" "$2"
}

t_gdb_script_path_installed_and_in_tree() {
	# A source tree (build/jemattach, gdb/jemalloc.gdb) and what "make install" creates.
	script_found_from "$TMPD/tree/build/jemattach" "$TMPD/tree/gdb/jemalloc.gdb"
	script_found_from "$TMPD/usr/bin/jemattach" "$TMPD/usr/share/jemattach/jemalloc.gdb"
	# make install's own plan for a PREFIX (-n: nothing is built or installed; without
	# the flags of a "make check" this may run under).
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n install PREFIX=/opt/jx DESTDIR="$TMPD/d" \
		BUILD="$(dirname "$JEMATTACH")" >"$TMPD/plan" || fail "make -n install failed"
	grep -q "^\(if .* then \)\?install -m 644 gdb/jemalloc.gdb $TMPD/d/opt/jx/share/jemattach/" "$TMPD/plan" ||
		fail "make install does not install gdb/jemalloc.gdb into PREFIX/share/jemattach"
}

t_get_agrees_with_jemattach_and_target() {
	local pid name
	start_fixture pid "$FIXTURES/jemfix"
	expect_eq "$(fix "$pid" "alloc 300 1000")" ok
	gdbrun "$pid" "jem-get stats.allocated" "jem-get version" "jem-get opt.narenas" \
		"jem-get config.prof" "jem-get opt.dirty_decay_ms" "jem-get arenas.page"
	expect_eq "$GRC" 0
	# The fixture is idle: its numbers cannot move between the three readings.
	jm "$pid" get stats.allocated version opt.narenas config.prof opt.dirty_decay_ms arenas.page
	expect_rc 0
	for name in stats.allocated version opt.narenas config.prof opt.dirty_decay_ms arenas.page; do
		expect_eq "$name $(gout "jem-get $name")" "$(grep "^$name " <<<"$OUT")"
	done
	expect_eq "$(gout "jem-get stats.allocated")" "$(fix "$pid" "get z stats.allocated")"
	expect_eq "$(gout "jem-get opt.dirty_decay_ms")" "$(fix "$pid" "get zs opt.dirty_decay_ms")"
	expect_eq "$(gout "jem-get opt.narenas")" "$(fix "$pid" "get u opt.narenas")"
	expect_eq "$(fix "$pid" check)" ok
}

t_commands_leave_the_process_as_it_was() {
	local pid before allocated
	start_fixture pid "$FIXTURES/jemfix"
	expect_eq "$(fix "$pid" "alloc 300 1000")" ok
	before=$(proc_state "$pid")
	allocated=$(fix "$pid" "get z stats.allocated")
	# Every reading command, and failures after the scratch is mapped.  A string gdb
	# copied into the process would be allocated there: stats.allocated would grow.
	gdbrun "$pid" "jem-info" "jem-prof-status" "jem-stats $TMPD/s.txt" "jem-stats -" \
		"jem-prof-dump /tmp/never.heap" "jem-set version 1" "jem-get no.such.name"
	[[ $GRC != 0 ]] || fail "a failed last command must fail gdb"
	expect_match "$(gout jem-info)" "stats.allocated +$allocated"$'\n'
	expect_match "$(gout "jem-prof-dump /tmp/never.heap")" "mallctl error 2 \(ENOENT: .*MALLOC_CONF=prof:true"
	expect_match "$(gout "jem-set version 1")" "version: mallctl error 1 \(EPERM"
	expect_match "$(gout "jem-get no.such.name")" "no.such.name: mallctl error 2 \(ENOENT"
	# The reason is each command's own line; gdb's error (one per failed command)
	# reads as the library's and names the same error.
	expect_eq "$(sort -u <<<"$GERR")" 'No symbol "jem: command failed: jem-get: mallctl error 2 (ENOENT)" in current context.
No symbol "jem: command failed: jem-prof-dump: mallctl error 2 (ENOENT)" in current context.
No symbol "jem: command failed: jem-set: mallctl error 1 (EPERM)" in current context.'
	expect_state "$pid" "$before"
	expect_eq "$(fix "$pid" "get z stats.allocated")" "$allocated"
	expect_eq "$(fix "$pid" check)" ok
	expect_eq "$(fix "$pid" ping)" pong
}

t_stats_same_report_as_jemattach() {
	local pid before
	start_fixture pid "$FIXTURES/jemfix"
	# Many arenas: a report several times the default's size must arrive whole.
	expect_eq "$(fix "$pid" "arenas 24")" ok
	before=$(proc_state "$pid")
	gdbrun "$pid" "jem-stats $TMPD/gdb.txt" "jem-stats $TMPD/gdb.json J" "jem-stats - gmdxbl"
	expect_eq "$GRC" 0
	jm "$pid" stats
	expect_rc 0
	echo "$OUT" >"$TMPD/jm.txt"
	same_sections "$TMPD/gdb.txt" "$TMPD/jm.txt"
	expect_match "$(sections "$TMPD/gdb.txt")" "arenas\[24\]:"
	# Idle fixture: the report's totals agree to the byte.
	expect_eq "$(grep '^Allocated:' "$TMPD/gdb.txt")" "$(grep '^Allocated:' "$TMPD/jm.txt")"
	# OPTS reach malloc_stats_print: JSON with jemattach's structure; printed in gdb.
	jm "$pid" stats --json
	expect_rc 0
	expect_eq "$(jq -c '[paths | map(tostring) | join(".")]' "$TMPD/gdb.json")" \
		"$(jq -c '[paths | map(tostring) | join(".")]' <<<"$OUT")"
	jm "$pid" stats --opts gmdxbl
	expect_rc 0
	expect_eq "$(gout "jem-stats - gmdxbl" | sed -n '/^___ Begin/,/^___ End/p' | sections /dev/stdin)" \
		"$(sections /dev/stdin <<<"$OUT")"
	expect_match "$(gout "jem-stats - gmdxbl")" "arenas\[24\]:"
	expect_state "$pid" "$before"
}

t_set_round_trip() {
	local pid decay arena tcache dss
	start_fixture pid "$FIXTURES/jemfix"
	decay=$(fix "$pid" "get zs arenas.dirty_decay_ms")
	arena=$(fix "$pid" "get u thread.arena")
	tcache=$(fix "$pid" "get b thread.tcache.enabled")
	dss=$(fix "$pid" "get s arena.0.dss")
	# ssize_t, unsigned (thread.arena of the thread gdb calls in: the fixture's only
	# one), bool and string, each read back by the target itself.
	gdbrun "$pid" "jem-set arenas.dirty_decay_ms 5000" "jem-get arenas.dirty_decay_ms" \
		"jem-set thread.arena 1" "jem-set thread.tcache.enabled false" "jem-set arena.0.dss primary"
	expect_eq "$GRC" 0
	expect_eq "$(gout "jem-set arenas.dirty_decay_ms 5000")" "arenas.dirty_decay_ms: $decay -> 5000"
	expect_eq "$(gout "jem-get arenas.dirty_decay_ms")" 5000
	expect_eq "$(fix "$pid" "get zs arenas.dirty_decay_ms")" 5000
	expect_eq "$(gout "jem-set thread.arena 1")" "thread.arena: $arena -> 1"
	expect_eq "$(fix "$pid" "get u thread.arena")" 1
	expect_eq "$(gout "jem-set thread.tcache.enabled false")" "thread.tcache.enabled: $tcache -> false"
	expect_eq "$(fix "$pid" "get b thread.tcache.enabled")" false
	expect_eq "$(gout "jem-set arena.0.dss primary")" "arena.0.dss: $dss -> primary"
	expect_eq "$(fix "$pid" "get s arena.0.dss")" primary
	jm "$pid" get arenas.dirty_decay_ms
	expect_eq "$OUT" 5000
	# And back: negative values and the original string.
	gdbrun "$pid" "jem-set arenas.dirty_decay_ms -1" "jem-set thread.arena $arena" \
		"jem-set thread.tcache.enabled $tcache" "jem-set arena.0.dss $dss"
	expect_eq "$GRC" 0
	expect_eq "$(fix "$pid" "get zs arenas.dirty_decay_ms")" -1
	expect_eq "$(fix "$pid" "get u thread.arena")" "$arena"
	expect_eq "$(fix "$pid" "get b thread.tcache.enabled")" "$tcache"
	expect_eq "$(fix "$pid" "get s arena.0.dss")" "$dss"
	expect_eq "$(fix "$pid" check)" ok
	# No maps comparison here: jemalloc itself maps memory for arena 1 and a new tcache.
}

t_profiling_and_dump_read_by_jeprof() {
	local pid cwd heap=$TMPD/gdb.heap
	start_fixture pid "$FIXTURES/jemfix" MALLOC_CONF=prof:true,prof_active:false,lg_prof_sample:0
	cwd=$(fix_cwd "$pid")
	gdbrun "$pid" "jem-prof-status" "jem-prof-on" "jem-set thread.prof.name gdbtest"
	expect_eq "$GRC" 0
	expect_match "$(gout jem-prof-status)" "prof.active +false"
	expect_eq "$(gout jem-prof-on)" "prof.active: false -> true"
	expect_eq "$(fix "$pid" "get b prof.active")" true
	expect_eq "$(fix "$pid" "get s thread.prof.name")" gdbtest
	# Sampled while active (every allocation: lg_prof_sample:0): 2000 blocks of 4096 B.
	expect_eq "$(fix "$pid" "alloc 2000 4096")" ok
	gdbrun "$pid" "jem-prof-dump $heap" "jem-prof-dump" "jem-prof-off"
	expect_eq "$GRC" 0
	expect_eq "$(fix "$pid" "get b prof.active")" false
	expect_match "$(head -1 "$heap")" "^heap_v2/1$"
	# jeprof un-samples nothing at period 1: main holds 2000 * 4096 B = 7.8 MB
	# (its cumulative column: on arm64 a frame below main holds them).
	jeprof --text "$FIXTURES/jemfix" "$heap" >"$TMPD/jeprof.txt" 2>"$TMPD/jeprof.err" ||
		fail "jeprof: $(cat "$TMPD/jeprof.err")"
	expect_match "$(cat "$TMPD/jeprof.txt")" "Total: [0-9.]+ MB"
	expect_match "$(grep -E ' main$' "$TMPD/jeprof.txt")" "^ +[0-9.]+ +[0-9.]+% +[0-9.]+% +(7\.[89]|8\.0) "
	# Without FILE the process names it in its working directory.
	ls "$cwd" | grep -qE "^jeprof\.$pid\.[0-9]+\.m[0-9]+\.heap$" || fail "no auto-named dump in $cwd"
	rm -f "$cwd"/jeprof.*.heap
}

t_redis_agrees_with_info_memory_and_jemattach() {
	local pid ours theirs heap=$TMPD/redis.heap
	start_redis pid MALLOC_CONF=prof:true,prof_active:true
	# 20000 keys of 100 bytes, so the heap is not trivial (DEBUG POPULATE is disabled by
	# default in Redis 7).
	awk -v v="$(printf "%0100d" 0)" 'BEGIN { for (i = 0; i < 20000; i++) print "SET key:" i, v }' |
		redis-cli -p "$REDIS_PORT" --pipe >/dev/null
	gdbrun "$pid" "jem-get stats.allocated" "jem-stats $TMPD/gdb.txt" "jem-prof-dump $heap"
	expect_eq "$GRC" 0
	ours=$(gout "jem-get stats.allocated")
	theirs=$(redis-cli -p "$REDIS_PORT" info memory | tr -d '\r' |
		awk -F: '$1 == "allocator_allocated" {print $2}')
	# Redis allocates a little between the two reads (client buffers, INFO).
	within "$ours" "$theirs" $((256 * 1024))
	jm "$pid" stats
	expect_rc 0
	echo "$OUT" >"$TMPD/jm.txt"
	same_sections "$TMPD/gdb.txt" "$TMPD/jm.txt"
	jeprof --text /usr/bin/redis-server "$heap" >"$TMPD/jeprof.txt" 2>"$TMPD/jeprof.err" ||
		fail "jeprof: $(cat "$TMPD/jeprof.err")"
	expect_match "$(cat "$TMPD/jeprof.txt")" "Total: [0-9.]+ MB"
	expect_eq "$(redis-cli -p "$REDIS_PORT" dbsize)" 20000
}

t_static_je_prefix() {
	local pid before
	start_fixture pid "$FIXTURES/jemfix-static-je"
	before=$(proc_state "$pid")
	gdbrun "$pid" "jem-get version" "jem-prefix je_" "jem-get stats.allocated" "jem-stats $TMPD/gdb.txt"
	expect_eq "$GRC" 0
	# Unprefixed names do not exist there; nothing is mapped before that is found out.
	expect_match "$GERR" 'No symbol "mallctl" in current context'
	expect_match "$(gout "jem-prefix je_")" "je_mallctl at 0x"
	expect_eq "$(gout "jem-get stats.allocated")" "$(fix "$pid" "get z stats.allocated")"
	jm "$pid" stats
	expect_rc 0
	echo "$OUT" >"$TMPD/jm.txt"
	same_sections "$TMPD/gdb.txt" "$TMPD/jm.txt"
	expect_state "$pid" "$before"
}

t_interactive_session_source_then_attach() {
	local pid out
	need_gdb_calls
	start_fixture pid "$FIXTURES/jemfix"
	# As typed at the prompt: load the library first, attach later, detach at the end.
	out=$(printf '%s\n' "source $SCRIPT" "jem-prefix" "attach $pid" "jem-get stats.allocated" \
		"detach" "quit" | gdb -nx -q 2>&1)
	expect_match "$out" 'jem: symbol prefix ""'
	expect_match "$out" "\(gdb\) $(fix "$pid" "get z stats.allocated")"$'\n'
	expect_eq "$(fix "$pid" ping)" pong
}

# A dump the process cannot write (no such directory: even root's process cannot create
# it there): the error printed is the one that happened, EFAULT, not another.
t_prof_dump_error_is_the_one_that_happened() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" MALLOC_CONF=prof:true
	gdbrun "$pid" "jem-prof-dump $TMPD/no/such/dir/x.heap"
	[[ $GRC != 0 ]] || fail "a failed dump must fail gdb"
	expect_match "$(gout "jem-prof-dump $TMPD/no/such/dir/x.heap")" \
		"^jem-prof-dump: prof.dump: mallctl error 14 \\(EFAULT: "
	expect_eq "$GERR" 'No symbol "jem: command failed: jem-prof-dump: mallctl error 14 (EFAULT)" in current context.'
	[[ ! -e $TMPD/no ]] || fail "something was created"
	expect_eq "$(fix "$pid" ping)" pong
}

# C++ names demangled where gdb prints symbols, "<symbol+offset>" included.
t_cxx_names_demangled() {
	local pid
	start_fixture pid "$FIXTURES/cxxsites"
	GDB_NO_CALLS=1 gdbrun "$pid" "x/i &_ZN9AllocatorILb0EE7reallocEPvmmm" "thread apply all bt"
	expect_match "$(gout "x/i &_ZN9AllocatorILb0EE7reallocEPvmmm")" \
		"<Allocator<false>::realloc\\(void\\*, unsigned long, unsigned long, unsigned long\\)>:"
	expect_match "$(gout "thread apply all bt")" " in shop::Worker::run "
}

run_tests
