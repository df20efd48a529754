#!/bin/bash
# 41-hostile-input.sh -- what a target's user controls -- the names it goes by,
# the files it maps and their debuglinks, the profiles it hands over, the
# text its jemalloc writes -- cannot hang root's jemattach, make it read
# what that user could not, grow without bound, or write raw control bytes
# to its terminal (issue 30; doc/safety-input.md).
. "$(dirname "$0")/../lib.sh"
PROF="MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0"
TUSER=jmatest
ESC=$'\e'
# Bytes a terminal acts on: C0 controls but tab and newline, DEL.
RAW='[\x00-\x08\x0b-\x1f\x7f]'
# Memory bounds are the tool's: under ASan (redzones, quarantine) only the
# behaviour is checked.
grep -q __asan_init "$JEMATTACH" && ASAN=1 || ASAN=0

have_user() {
	id "$TUSER" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$TUSER" 2>/dev/null
	id "$TUSER" >/dev/null 2>&1
}

# A directory of the target's user, reachable by it.
user_dir() {
	chmod 0711 "$TMPD"
	mkdir -p "$TMPD/u"
	chown "$TUSER" "$TMPD/u"
	echo "$TMPD/u"
}

# evil_lib OUT [DEBUGLINK]: a library whose code names itself with escapes
# (a sleeping thread in it, an allocation from its constructor), without a
# build-id (a debuglink is then checked by its CRC, as libdwfl does), stripped
# of .symtab so that its symbols are looked for in separate debuginfo, with
# a .gnu_debuglink naming DEBUGLINK (any bytes: as a hostile user writes it).
evil_lib() {
	local out=$1 link=${2:-}
	cat >"$TMPD/evil.c" <<-'EOF'
	#include <pthread.h>
	#include <stdlib.h>
	#include <unistd.h>
	int evil_ctl(void) __asm__("bad.mallctl");
	int evil_ctl(void) { return 1; }
	void *keep;
	void *evil_QQQQQQQQloop(void *a) { for (;;) pause(); return a; }
	__attribute__((constructor)) void evil_QQQQgrab(void)
	{
		pthread_t t;
		keep = malloc(123456);
		pthread_create(&t, NULL, evil_QQQQQQQQloop, NULL);
	}
	EOF
	gcc -shared -fPIC -O1 -fno-omit-frame-pointer -Wl,-Bsymbolic -Wl,--build-id=none -o "$out" "$TMPD/evil.c" -lpthread || return 1
	strip --strip-all "$out" || return 1
	# The assembler takes no escape in a name; the file does (same length,
	# in .dynstr; -Bsymbolic: the library refers to them by address only).
	python3 - "$out" <<-'EOF'
	import sys
	b = open(sys.argv[1], 'rb').read()
	b = b.replace(b'evil_QQQQQQQQloop', b'evil_\x1b]0;pwn\x07loop').replace(b'evil_QQQQgrab', b'evil_\x1b[2Jgrab')
	open(sys.argv[1], 'wb').write(b)
	EOF
	if [[ -n $link ]]; then
		python3 - "$link" "$TMPD/link.bin" <<-'EOF'
		import struct, sys
		name = sys.argv[1].encode('latin-1', 'surrogateescape') + b'\0'
		name += b'\0' * (-len(name) % 4)
		open(sys.argv[2], 'wb').write(name + struct.pack('<I', 0x12345678))
		EOF
		objcopy --add-section .gnu_debuglink="$TMPD/link.bin" "$out" || return 1
	fi
	chmod 0755 "$out"
}

# The target's user starts hostilefix (names with escapes) with profiling on.
start_hostile() {
	local __v=$1; shift
	start_fixture_cmd "$__v" setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups \
		env "$PROF" "$@" "$(user_fixture hostilefix)"
}

# Runs: "$1" a label; then a jemattach command line under a timeout: sets
# RC, OUT, ERR; a hang is a failure.
run_limited() {
	local what=$1 limit=$2; shift 2
	RC=0
	OUT=$(timeout "$limit" "$@" 2>"$TMPD/err") || RC=$?
	ERR=$(cat "$TMPD/err")
	[[ $RC != 124 && $RC != 137 ]] || fail "$what: still running after $limit s"
}

# Row "debuginfo": a FIFO named by the debuglink of a library the target
# maps, next to it in a directory of the target's user.  Before, root opened
# it with a plain open(): get, info, threads and prof dump --analyze hung.
t_debuglink_fifo_never_blocks() {
	local pid d i cmd
	have_user || skip "no $TUSER user"
	cd "$TMPD"	# before the fix, prof dump --analyze left a copy here
	d=$(user_dir)
	evil_lib "$d/libevil.so" evil.debug
	runuser -u "$TUSER" -- mkfifo "$d/evil.debug"
	mkdir -p "$d/.debug" && chown "$TUSER" "$d/.debug"
	runuser -u "$TUSER" -- mkfifo "$d/.debug/evil.debug"
	start_hostile pid
	expect_eq "$(fix "$pid" "load $d/libevil.so")" ok
	for i in $(seq 10); do
		for cmd in "get version" info threads "prof dump --analyze"; do
			# No symbol cache: each run looks the module up again.
			run_limited "$cmd ($i)" 30 env XDG_CACHE_HOME="$TMPD/nocache$i" \
				"$JEMATTACH" "$pid" $cmd
			[[ $RC == 0 ]] || fail "$cmd ($i): exit $RC: $ERR"
		done
	done
	expect_eq "$(fix "$pid" ping)" pong
}

# Row "debuginfo", the unwinder's side: a library without an unwind table
# index (no PT_GNU_EH_FRAME) at a path that is, on root's side, a FIFO of the
# target's user; the target sees its library there through a bind mount of
# its own.  The walk must never open that path on our side (libunwind-ptrace's
# _UPT_find_proc_info would, by its source; here the old build happened to
# end the walk before it did, so this guards the property rather than
# reproducing a hang seen): threads must end, and keep ending.
t_unwind_never_opens_the_targets_paths_here() {
	local pid d i
	have_user || skip "no $TUSER user"
	d=$(user_dir)
	cat >"$TMPD/noeh.c" <<-'EOF'
	#include <pthread.h>
	#include <unistd.h>
	static void *nap(void *a) { for (;;) pause(); return a; }
	__attribute__((constructor)) static void start(void)
	{
		pthread_t t;
		pthread_create(&t, NULL, nap, NULL);
	}
	EOF
	gcc -shared -fPIC -O1 -Wl,--no-eh-frame-hdr -o "$d/real.so" "$TMPD/noeh.c" -lpthread
	chmod 0755 "$d/real.so"
	[[ -z $(readelf -lW "$d/real.so" | grep EH_FRAME) ]] || fail "the library has PT_GNU_EH_FRAME"
	runuser -u "$TUSER" -- mkfifo "$d/libnoeh.so"
	start_fixture_cmd pid setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups \
		unshare -Urm sh -c 'mount --bind "$0" "$1" && exec env '"$PROF"' "$2"' \
		"$d/real.so" "$d/libnoeh.so" "$(user_fixture hostilefix)"
	expect_eq "$(fix "$pid" "load $d/libnoeh.so")" ok
	grep -q "$d/libnoeh.so" "/proc/$pid/maps" || fail "the library is not mapped"
	for i in $(seq 10); do
		run_limited "threads ($i)" 30 "$JEMATTACH" "$pid" threads
		[[ $RC == 0 ]] || fail "threads ($i): exit $RC: $ERR"
	done
	expect_eq "$(fix "$pid" ping)" pong
}

# Row "debuginfo": a debuglink of "../../../dev/zero" with a checksum to
# compare.  Before, analyze's libdwfl lookup followed it and checksummed
# /dev/zero forever at 100% CPU (offline, and live in prof dump --analyze).
t_debuglink_dotdot_is_not_followed() {
	local pid d i
	have_user || skip "no $TUSER user"
	cd "$TMPD"
	d=$(user_dir)
	evil_lib "$d/libevil.so" "../../../../../../../../../../dev/zero"
	start_hostile pid
	expect_eq "$(fix "$pid" "load $d/libevil.so")" ok
	jm "$pid" prof dump -o "$TMPD/evil.heap"
	expect_rc 0
	grep -q libevil.so "$TMPD/evil.heap" || fail "the dump does not map libevil.so"
	for i in $(seq 10); do
		run_limited "analyze ($i)" 30 "$JEMATTACH" analyze "$TMPD/evil.heap"
		expect_rc 0
		run_limited "analyze --pid ($i)" 30 "$JEMATTACH" analyze --pid "$pid" "$TMPD/evil.heap"
		expect_rc 0
	done
	run_limited "prof dump --analyze" 30 "$JEMATTACH" "$pid" prof dump --analyze
	expect_rc 0
}

# Row "bounded work": a dump made of millions of distinct short addresses.
# Before, 32 MB took 1 GB (2.9 GB for 128 MB); the bound is 8 times the
# profile's size + 64 MiB, and a profile past it is refused with exit 2.
t_crafted_dump_memory_is_bounded() {
	local kb bound
	python3 - "$TMPD/big.heap" "$TMPD/near.heap" <<-'EOF'
	import sys
	def write(path, size, pool):
	    w = ["heap_v2/1\n t*: 1: 1 [0: 0]\n"]; n = len(w[0]); i = 0
	    while n < size:
	        s = "@ %s\n t*: 1: 1 [0: 0]\n" % ' '.join('%x' % (0x100000 + ((i * 256 + j) % pool) * 16) for j in range(256))
	        i += 1; w.append(s); n += len(s)
	    w.append("MAPPED_LIBRARIES:\n")
	    open(path, 'w').write(''.join(w))
	write(sys.argv[1], 32 << 20, 1 << 30)	# every address distinct: refused
	write(sys.argv[2], 32 << 20, 250000)	# inside the bound: analyzed
	EOF
	bound=$(( (8 * $(stat -c %s "$TMPD/big.heap") + (64 << 20)) / 1024 ))
	run_limited "analyze big.heap" 120 /usr/bin/time -f %M -o "$TMPD/kb" "$JEMATTACH" analyze "$TMPD/big.heap"
	expect_rc 2
	expect_match "$ERR" "would take about [0-9]+ MiB to analyze besides the text, more than the [0-9]+ MiB allowed"
	kb=$(tail -1 "$TMPD/kb")
	(( ASAN || kb <= bound )) || fail "big.heap: $kb KB, more than the bound $bound KB"
	bound=$(( (8 * $(stat -c %s "$TMPD/near.heap") + (64 << 20)) / 1024 ))
	for fmt in text collapsed json pprof; do
		run_limited "analyze near.heap" 120 /usr/bin/time -f %M -o "$TMPD/kb" \
			"$JEMATTACH" analyze "$TMPD/near.heap" --format "$fmt" -o "$TMPD/near.$fmt"
		expect_rc 0
		kb=$(tail -1 "$TMPD/kb")
		(( ASAN || kb <= bound )) || fail "near.heap --format $fmt: $kb KB, more than the bound $bound KB"
	done
}

# Row "bounded work": a 1 MB library whose compressed .debug_info claims, and
# inflates to, 640 MiB.  Before, threads took all of it (1.07 GB for 1 GiB);
# past the 512 MiB a command inflates, its DWARF is not read.
t_compressed_section_bomb_is_not_inflated() {
	local pid kb
	cd "$TMPD"
	evil_lib "$TMPD/bomb.so"
	python3 - "$TMPD/bomb.so" $((640 << 20)) <<-'EOF' || fail "cannot build the bomb"
	import struct, subprocess, sys, zlib
	so, size = sys.argv[1], int(sys.argv[2])
	c = zlib.compressobj(9); chunk = b'\0' * (1 << 20)
	parts = [struct.pack('<IIQQ', 1, 0, size, 1)]
	parts += [c.compress(chunk) for _ in range(size >> 20)] + [c.flush()]
	open(so + '.blob', 'wb').write(b''.join(parts))
	subprocess.check_call(['objcopy', '--add-section', '.debug_info=' + so + '.blob', so])
	b = bytearray(open(so, 'rb').read())
	shoff, = struct.unpack_from('<Q', b, 0x28)
	shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
	stroff, = struct.unpack_from('<Q', b, shoff + shstrndx * shentsize + 0x18)
	for i in range(shnum):
	    h = shoff + i * shentsize
	    name, = struct.unpack_from('<I', b, h)
	    if b[stroff + name:b.index(b'\0', stroff + name)] == b'.debug_info':
	        flags, = struct.unpack_from('<Q', b, h + 8)
	        struct.pack_into('<Q', b, h + 8, flags | 0x800)	# SHF_COMPRESSED
	open(so, 'wb').write(b)
	EOF
	start_fixture pid "$FIXTURES/hostilefix" "$PROF"
	expect_eq "$(fix "$pid" "load $TMPD/bomb.so")" ok
	for cmd in threads "prof dump --analyze"; do
		run_limited "$cmd" 60 /usr/bin/time -f %M -o "$TMPD/kb" "$JEMATTACH" "$pid" $cmd
		expect_rc 0
		kb=$(tail -1 "$TMPD/kb")
		(( ASAN || kb < 200 * 1024 )) || fail "$cmd with the bomb mapped: $kb KB"
	done
	expect_match "$OUT$ERR" "evil_"
}

# Row "bounded work": a target whose malloc_stats_print never returns (it
# patched its own code), writing fast or slowly.  Before, stats never ended:
# each write restarted the timeout.  Now 64 MiB, or 6 timeouts, then one more.
t_endless_stats_end_within_their_bounds() {
	local pid how t0
	for how in endless-stats slow-stats; do
		start_fixture pid "$FIXTURES/hostilefix"
		expect_eq "$(fix "$pid" "$how")" ok
		t0=$SECONDS
		RC=0
		timeout 60 "$JEMATTACH" -t 1 "$pid" stats >"$TMPD/stats.out" 2>"$TMPD/err" || RC=$?
		ERR=$(cat "$TMPD/err")
		[[ $RC != 124 ]] || fail "$how: stats still running after 60 s"
		expect_rc 5
		expect_match "$ERR" "the statistics report went on past (64 MiB|6 times the timeout)"
		(( SECONDS - t0 <= 30 )) || fail "$how: stats took $((SECONDS - t0)) s"
		(( $(stat -c %s "$TMPD/stats.out") <= 64 << 20 )) || fail "$how: more than 64 MiB written"
	done
}

# Row "bounded work": a target whose malloc_stats_print writes to fd 2
# without end, never to the callback (issue 41).  Before, each of those
# stray writes restarted the timeout: -t 1 stats ran past 45 and 120 s.
# Now stray writes are no progress (it ends after one timeout), and the
# call's whole bound is 7 timeouts whatever it writes.
t_stats_flooding_fd2_ends_within_its_bound() {
	local pid t0 ms
	start_fixture pid "$FIXTURES/hostilefix"
	expect_eq "$(fix "$pid" flood-stats)" ok
	t0=$(date +%s%N)
	RC=0
	timeout 60 "$JEMATTACH" -t 1 "$pid" stats >"$TMPD/stats.out" 2>"$TMPD/err" || RC=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	ERR=$(cat "$TMPD/err")
	[[ $RC != 124 ]] || fail "stats still running after 60 s"
	expect_rc 5
	expect_match "$ERR" "did not return within [0-9]+ ms"
	expect_match "$ERR" "also wrote [0-9]+ bytes to fd 2"
	# 7 s, and what stopping the thread and the report's messages take.
	(( ms <= 12000 )) || fail "stats took $ms ms (bound: 7 x -t, 7000 ms)"
	[[ ! -s $TMPD/stats.out ]] || fail "the stray text was printed"
	echo "    (flood: -t 1 stats ended after $ms ms)" >&2
	# Left to flood its own stderr (the borrowed thread is its main one,
	# which would answer ping), but running: no thread stopped.
	expect_not_stopped "$pid"
}

# --- Cores (issue 41): a core is data its writer chose, the file names in it
# included.  The target's user runs jemfix; root takes a gcore of it; the
# user edits it (tests/craftcore.py) and owns the result.
CRAFT="python3 $(dirname "$(readlink -f "$0")")/../craftcore.py"

# user_core VAR: a gcore of a jemfix of the target's user, in $TMPD/good.core;
# VAR gets its pid, alive.
user_core() {
	local __p
	have_user || skip "no $TUSER user"
	command -v gcore >/dev/null || skip "no gcore"
	start_fixture_cmd __p setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups \
		"$FIXTURES/jemfix"
	gcore -o "$TMPD/g" "$__p" >/dev/null 2>&1 || { fail "gcore $__p failed"; return 1; }
	mv "$TMPD/g.$__p" "$TMPD/good.core"
	printf -v "$1" '%s' "$__p"
}

# jemalloc's library as the process maps it.
je_lib() { awk '/libjemalloc/ { print $6; exit }' "/proc/$1/maps"; }

# Row "cores": NT_FILE names a root-only file for a page at an address
# nothing maps, and jemalloc's opt_dss pointer (a string in its read-only
# data) points there.  Before, `core CORE get opt.dss` and `stats` printed
# the file (root read it); now the core owner's rights apply: not read, and
# the page is not in the image.
t_crafted_core_prints_no_root_file() {
	local pid d lib at f core cmd x=0x10000000
	user_core pid
	d=$(user_dir)
	lib=$(je_lib "$pid")
	at=$($CRAFT "$pid" find "$lib" "b'secondary\0'")
	[[ -n $at ]] || fail "no \"secondary\" in $lib"
	jm core "$TMPD/good.core" get opt.dss
	expect_rc 0
	expect_eq "$OUT" secondary
	# A file of root's only, and one like /etc/shadow (root:shadow 0640).
	echo "root-only-SECRET-$RANDOM" >"$TMPD/secret" && chmod 0600 "$TMPD/secret"
	echo "root:\$6\$SHADOWSECRET$RANDOM:19000:0:99999:7:::" >"$TMPD/shadow"
	chgrp shadow "$TMPD/shadow" 2>/dev/null; chmod 0640 "$TMPD/shadow"
	for f in secret shadow; do
		core="$d/$f.core"
		cp "$TMPD/good.core" "$core"
		$CRAFT "$core" add-file $x $((x + 4096)) "$TMPD/$f"
		(( $($CRAFT "$core" poke-ptrs $x $at) > 0 )) || fail "no pointer to \"secondary\" in the core"
		chown "$TUSER" "$core"
		for cmd in "get opt.dss" stats "stats --json"; do
			run_limited "$f: $cmd" 60 "$JEMATTACH" core "$core" $cmd
			[[ $OUT$ERR != *SECRET* ]] || fail "$f: core $cmd printed the file: $OUT"
		done
		run_limited "$f: get opt.dss" 60 "$JEMATTACH" core "$core" get opt.dss
		expect_match "$ERR" "$TMPD/$f, which holds memory the core omitted, is not read"
	done
}

# Row "cores": NT_FILE names a FIFO of the target's user for the page
# holding jemalloc's version string, and the core path itself is a FIFO.
# Before, get version, census and info hung in open() (and `core FIFO`).
t_crafted_core_fifos_never_block() {
	local pid d lib at cmd
	user_core pid
	d=$(user_dir)
	lib=$(je_lib "$pid")
	jm "$pid" get version
	at=$($CRAFT "$pid" find "$lib" "b'$OUT\0'" | head -1)
	[[ -n $at ]] || fail "no version string in $lib"
	runuser -u "$TUSER" -- mkfifo "$d/fifo"
	cp "$TMPD/good.core" "$d/fifo.core"
	$CRAFT "$d/fifo.core" rename-at "$at" "$d/fifo"
	chown "$TUSER" "$d/fifo.core"
	for cmd in "get version" census info; do
		run_limited "$cmd" 30 "$JEMATTACH" -t 5 core "$d/fifo.core" $cmd
	done
	expect_match "$ERR" "$d/fifo, which holds memory the core omitted, is not read: not a regular file"
	runuser -u "$TUSER" -- mkfifo "$d/core"
	run_limited "core FIFO" 10 "$JEMATTACH" core "$d/core" info
	expect_rc 2
	expect_match "$ERR" "not a regular, non-empty file"
}

# Row "cores": a core whose own segment puts `jmp .` over jemalloc's code
# (every emulated call loops), and one whose segments overlap.  Before, each
# of info's six calls ran to the timeout (18 s with -t 3); the timeout now
# bounds the emulated calls of a command together; overlapping segments
# (which no kernel or gcore writes) are refused.
t_malformed_cores_end_within_the_timeout() {
	local pid d lib lo hi a m fill ms cmd t0
	user_core pid
	d=$(user_dir)
	lib=$(je_lib "$pid")
	read -r lo hi < <(awk -v l="$lib" '$6 == l && $2 ~ /x/ { split($1, a, "-"); print "0x" a[1], "0x" a[2]; exit }' \
		"/proc/$pid/maps")
	[[ -n $lo ]] || fail "no code mapping of $lib"
	# jmp . (x86_64: functions start 16-aligned) or b . (arm64)
	[[ $(uname -m) == x86_64 ]] && fill=ebfe || fill=00000014
	cp "$TMPD/good.core" "$d/loop.core"
	$CRAFT "$d/loop.core" add-seg "$lo" $((hi - lo)) $fill
	cp "$TMPD/good.core" "$d/over.core"
	read -r a m < <($CRAFT "$TMPD/good.core" first-load)
	$CRAFT "$d/over.core" add-seg "$a" 4096 00
	chown "$TUSER" "$d/loop.core" "$d/over.core"
	for cmd in info "get version stats.allocated opt.narenas" stats; do
		t0=$(date +%s%N)
		run_limited "loop: $cmd" 60 "$JEMATTACH" -t 3 core "$d/loop.core" $cmd
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		echo "    (loop.core $cmd: exit $RC after $ms ms)" >&2
		# 3 s, and the set-up (symbols, the image) and what follows.
		(( ms <= 8000 )) || fail "loop: $cmd took $ms ms with -t 3"
		[[ $RC != 0 || $cmd == info ]] || fail "loop: $cmd succeeded"
		run_limited "overlap: $cmd" 60 "$JEMATTACH" -t 3 core "$d/over.core" $cmd
		expect_rc 4
		expect_match "$ERR" "malformed: memory segments .* overlap"
	done
}

# Row "bounded work": prof dump --analyze without -o leaves no copy (of up to
# 1 GiB) in the current directory.
t_dump_analyze_without_o_writes_no_file() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	mkdir "$TMPD/cwd"
	RC=0
	OUT=$(cd "$TMPD/cwd" && "$JEMATTACH" "$pid" prof dump --analyze 2>"$TMPD/err") || RC=$?
	ERR=$(cat "$TMPD/err")
	expect_rc 0
	expect_match "$OUT" "Total: "
	[[ -z $(ls -A "$TMPD/cwd") ]] || fail "left in the current directory: $(ls -A "$TMPD/cwd")"
}

# Row "terminal": thread and process names, a module path, the version
# string, opt.prof_prefix and symbol names carry escapes; no command writes
# one raw, and JSON stays JSON.
t_control_bytes_never_reach_the_terminal() {
	local pid d cmd lib
	have_user || skip "no $TUSER user"
	cd "$TMPD"
	d=$(user_dir)
	lib="$d/lib${ESC}]0;pwn"$'\a'"${ESC}[31m.so"
	evil_lib "$lib"
	start_hostile pid "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0,prof_prefix:/tmp/x${ESC}]0;pwn"$'\a'
	expect_eq "$(fix "$pid" "load $lib")" ok
	expect_eq "$(fix "$pid" patch-version)" ok
	jm "$pid" prof dump -o "$TMPD/esc.heap"
	expect_rc 0
	grep -q "$ESC" "$TMPD/esc.heap" || fail "the dump carries no escape to test with"
	for cmd in info threads "get version" "get opt.prof_prefix" "get version opt.prof_prefix" \
		"prof status" stats "stats -O a" "-v get version" "-vv info" "prof dump --analyze"; do
		if [[ $cmd == -v* ]]; then
			run_limited "$cmd" 60 "$JEMATTACH" ${cmd%% *} "$pid" ${cmd#* }
		else
			run_limited "$cmd" 60 "$JEMATTACH" "$pid" $cmd
		fi
		[[ $RC == 0 ]] || fail "$cmd: exit $RC: $ERR"
		! grep -qP "$RAW" <<<"$OUT" || fail "$cmd: raw control bytes on stdout: $(grep -P "$RAW" <<<"$OUT" | head -2 | od -c | head -5)"
		! grep -qP "$RAW" <<<"$ERR" || fail "$cmd: raw control bytes on stderr"
	done
	# The escapes are shown, not dropped.
	run_limited "get version" 30 "$JEMATTACH" "$pid" get version
	expect_match "$OUT" '\\x1b\]0;pwn\\x07'
	for cmd in "info --json" "threads --json" "stats --json" "get --json version opt.prof_prefix"; do
		run_limited "$cmd" 60 "$JEMATTACH" "$pid" $cmd
		[[ $RC == 0 ]] || fail "$cmd: exit $RC: $ERR"
		! grep -qP "$RAW" <<<"$OUT$ERR" || fail "$cmd: raw control bytes"
		python3 -c 'import json, sys; json.loads(sys.stdin.read())' <<<"$OUT" ||
			fail "$cmd: not valid JSON"
	done
	for cmd in "analyze $TMPD/esc.heap" "analyze --format collapsed $TMPD/esc.heap" \
		"analyze --pid $pid $TMPD/esc.heap" "analyze --format json $TMPD/esc.heap"; do
		run_limited "$cmd" 60 "$JEMATTACH" $cmd
		[[ $RC == 0 ]] || fail "$cmd: exit $RC: $ERR"
		! grep -qP "$RAW" <<<"$OUT$ERR" || fail "$cmd: raw control bytes"
	done
	expect_match "$OUT" 'evil_\\u001b'
}

run_tests
