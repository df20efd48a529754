#!/bin/bash
# 54-emulate.sh -- --emulate: jemalloc's code run on a copy of the process, so
# it answers while a thread holds a jemalloc lock forever, writes nothing in
# the process and never resumes it into jemalloc, and gives the same answers
# as the in-target call on a quiescent process.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

PROF=MALLOC_CONF=prof:true
NAMES="stats.allocated stats.active stats.resident stats.mapped stats.metadata stats.retained
arenas.narenas opt.prof config.prof prof.active opt.lg_prof_sample opt.narenas arenas.page
version stats.arenas.0.pactive stats.arenas.0.nthreads opt.prof_prefix"
# Counters that the in-target call's own locking and allocations move.
# Emulated stats and profiles run jemalloc's whole printer or dumper in unicorn:
# seconds where unicorn itself runs under TCG (the arm64 guest), so a generous
# limit (a hang still shows as a timeout).
SLOW=(--timeout 120)
VOLATILE='walk(if type=="object" then del(.mutexes, .mutex, .uptime_ns, .nmalloc, .ndalloc,
	.nrequests, .nfills, .nflushes) else . end)'

state_of() { awk '{print $3}' "/proc/$1/stat"; }

# Every task of PID is in a stop (T or t).
all_stopped() {
	local t
	for t in /proc/"$1"/task/*; do
		[[ $(awk '{print $3}' "$t/stat") == [Tt] ]] || return 1
	done
}

# Checksum of every writable mapping of PID, read through /proc/PID/mem.
mem_sum() {
	perl -MDigest::MD5 -e '
		my $pid = shift; my $md5 = Digest::MD5->new;
		open(my $maps, "<", "/proc/$pid/maps") or die;
		open(my $mem, "<:raw", "/proc/$pid/mem") or die;
		while (<$maps>) {
			my ($lo, $hi, $perm) = /^([0-9a-f]+)-([0-9a-f]+) (\S+)/ or next;
			next unless $perm =~ /^rw/;
			($lo, $hi) = (hex($lo), hex($hi));
			sysseek($mem, $lo, 0) or next;
			my $n = sysread($mem, my $buf, $hi - $lo);
			$md5->add("$lo:", defined($n) ? $buf : "unreadable");
		}
		print $md5->hexdigest, "\n";' "$1"
}

# A fixture whose prof.dump thread holds jemalloc's locks until a FIFO is read.
start_locked() {
	local __var=$1 __p
	start_fixture __p "$FIXTURES/jemfix" $PROF
	fix "$__p" "alloc 2000 2000" >/dev/null
	BEFORE=$(fix "$__p" "get z stats.allocated")
	mkfifo "$TMPD/dumpfifo.$__p"
	expect_eq "$(fix "$__p" "dump $TMPD/dumpfifo.$__p")" ok
	# Wait for the dump thread to block in creat() on the FIFO.
	for _ in $(seq 200); do
		grep -qs '^creat\|open' "/proc/$__p/task/"*/wchan 2>/dev/null && break
		[[ $(ls "/proc/$__p/task" | wc -l) -ge 2 ]] && break
		sleep 0.02
	done
	sleep 0.3
	printf -v "$__var" '%s' "$__p"
}

# In the target: refused before anything stops, pointing at --emulate; with
# --force, called, timed out and left to finish, pointing at it too.
t_locked_target_in_target_refused_or_times_out() {
	local pid
	start_locked pid
	jm -t 1 "$pid" get stats.allocated
	expect_rc 5
	expect_match "$ERR" "^jemattach: refused: .*may hold a lock.*--emulate"
	jm -t 1 --force "$pid" get stats.allocated
	expect_rc 5
	expect_match "$ERR" "did not return within 1000 ms.*--emulate"
}

t_locked_target_emulated_and_untouched() {
	local pid sum0 sum1 v
	start_locked pid
	kill -STOP "$pid"
	for _ in $(seq 200); do all_stopped "$pid" && break; sleep 0.01; done
	all_stopped "$pid" || fail "target did not stop"
	sum0=$(mem_sum "$pid")
	jm --emulate "$pid" get stats.allocated
	expect_rc 0
	v=$OUT
	# What it had before the lock was taken, give or take the dump thread.
	within "$v" "$BEFORE" 262144
	(( v > 2000 * 2000 )) || fail "stats.allocated $v is below what the fixture holds"
	jm "${SLOW[@]}" --emulate "$pid" stats
	expect_rc 0
	expect_match "$OUT" "Allocated: [0-9]+"
	jm "${SLOW[@]}" --emulate "$pid" stats --json
	expect_rc 0
	# malloc_stats_print's own 64 KiB output buffer is counted in its figures.
	within "$(jq '.jemalloc.stats.allocated' <<<"$OUT")" "$v" 131072
	jm "${SLOW[@]}" --emulate "$pid" prof dump -o -
	expect_rc 0
	expect_match "$OUT" "^heap_v2/"
	expect_match "$OUT" "MAPPED_LIBRARIES"
	# Stopped all along (never resumed, in jemalloc or elsewhere), memory unchanged.
	all_stopped "$pid" || fail "a thread of the target was resumed"
	sum1=$(mem_sum "$pid")
	expect_eq "$sum1" "$sum0"
	kill -CONT "$pid"
}

t_quiescent_same_values() {
	local pid t e
	start_fixture pid "$FIXTURES/jemfix" $PROF
	fix "$pid" "alloc 1000 3000" >/dev/null
	fix "$pid" "arenas 2" >/dev/null
	jm "$pid" get $NAMES
	expect_rc 0
	t=$OUT
	jm --emulate "$pid" get $NAMES
	expect_rc 0
	expect_eq "$OUT" "$t"
	expect_eq "$(jm --emulate "$pid" get stats.allocated; echo "$OUT")" \
		"$(fix "$pid" "get z stats.allocated")"
	jm "$pid" stats --json
	t=$(jq "$VOLATILE" <<<"$OUT")
	jm "${SLOW[@]}" --emulate "$pid" stats --json
	expect_rc 0
	e=$(jq "$VOLATILE" <<<"$OUT")
	[[ $e == "$t" ]] || { diff <(echo "$t") <(echo "$e") | head >&2; fail "stats --json differ"; }
}

t_quiescent_same_profile() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" $PROF
	fix "$pid" "alloc 500 5000" >/dev/null
	jm "$pid" prof dump -o "$TMPD/t.heap"
	expect_rc 0
	jm "${SLOW[@]}" --emulate "$pid" prof dump -o "$TMPD/e.heap"
	expect_rc 0
	grep -q '^@ ' "$TMPD/e.heap" || fail "no samples in the emulated dump"
	jm --emulate "$pid" prof status
	expect_rc 0
	expect_match "$OUT" "opt.prof +true"
	jm --emulate "$pid" watch -i 0.2 -n 2 -o -
	expect_rc 0
	expect_eq "$(grep -c '"allocated":' <<<"$OUT")" 2
	diff <(sed '/MAPPED_LIBRARIES/q' "$TMPD/t.heap") <(sed '/MAPPED_LIBRARIES/q' "$TMPD/e.heap") >&2 ||
		fail "the emulated profile's samples differ"
	expect_eq "$(ls -A "$(fix_cwd "$pid")")" ""
}

t_static_and_prefixed() {
	local pid bin
	for bin in jemfix-static jemfix-static-je jemfix-static-rjem jemfix-in-so jemfix-full-static; do
		start_fixture pid "$FIXTURES/$bin"
		fix "$pid" "alloc 100 1000" >/dev/null
		jm "$pid" get stats.allocated stats.resident
		local t=$OUT
		jm --emulate "$pid" get stats.allocated stats.resident
		expect_rc 0
		[[ $OUT == "$t" ]] || fail "$bin: emulated '$OUT' vs in-target '$t'"
	done
}

t_redis_and_freeze() {
	local pid t
	start_redis pid
	expect_eq "$(redis-cli -p "$REDIS_PORT" debug populate 20000 key 200)" OK
	settle "$pid"
	jm "$pid" get stats.allocated stats.active
	expect_rc 0
	t=$OUT
	jm --emulate "$pid" get stats.allocated stats.active
	expect_rc 0
	expect_eq "$OUT" "$t"
	jm -v --freeze --emulate "$pid" get stats.allocated stats.active
	expect_rc 0
	expect_eq "$OUT" "$t"
	expect_match "$ERR" "threads stopped while the copy is made"
	[[ $(state_of "$pid") != T ]] || fail "redis left stopped"
	expect_eq "$(redis-cli -p "$REDIS_PORT" dbsize)" 20000
}

# Every jemalloc version built for the matrix (build/versions, see 80-versions.sh).
t_version_matrix() {
	local dir=${VERSIONS_DIR:-build/versions} v pid t n=0
	for v in "$dir"/*/jemfix; do
		[[ -x $v ]] || continue
		start_fixture pid "$v"
		fix "$pid" "alloc 200 4000" >/dev/null
		jm "$pid" get stats.allocated stats.active version
		expect_rc 0
		t=$OUT
		jm --emulate "$pid" get stats.allocated stats.active version
		expect_rc 0
		[[ $OUT == "$t" ]] || fail "$v: emulated '$OUT' vs in-target '$t'"
		jm "${SLOW[@]}" --emulate "$pid" stats
		expect_rc 0
		expect_match "$OUT" "Begin jemalloc statistics"
		n=$((n + 1))
	done
	((n)) || skip "no jemalloc version of the matrix under $dir: $(why_no_versions "$dir")"
}

t_writes_refused() {
	local pid before
	start_fixture pid "$FIXTURES/jemfix" $PROF
	before=$(proc_state "$pid")
	for cmd in "set prof.active false" "purge" "decay" "prof on" "prof off" "prof reset"; do
		jm --emulate "$pid" $cmd
		expect_rc 2
		expect_match "$ERR" "copy"
	done
	expect_state "$pid" "$before"
}

# libunicorn is loaded only when an emulation starts: a broken copy found
# first on the library path fails --emulate with a clear exit 4, and leaves
# the in-target commands, which never load it, working.
t_unicorn_loaded_only_to_emulate() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	mkdir "$TMPD/nouc"
	: >"$TMPD/nouc/libunicorn.so.2"
	LD_LIBRARY_PATH=$TMPD/nouc jm "$pid" get stats.allocated
	expect_rc 0
	expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
	LD_LIBRARY_PATH=$TMPD/nouc jm --emulate "$pid" get stats.allocated
	expect_rc 4
	expect_match "$ERR" "emulation needs libunicorn \(Debian package libunicorn2\): .*libunicorn.so.2"
	jm --emulate "$pid" get stats.allocated
	expect_rc 0
}

run_tests
