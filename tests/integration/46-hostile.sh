#!/bin/bash
# 46-hostile.sh -- a local user who owns the target, or shares /tmp with it,
# cannot turn root's jemattach against root (issue 17).
. "$(dirname "$0")/../lib.sh"
PROF="MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0"
TUSER=jmatest

# The unprivileged test account (a system user, kept: it is reusable).
have_user() {
	id "$TUSER" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$TUSER" 2>/dev/null
	id "$TUSER" >/dev/null 2>&1
}

# Row 1: the target's user, in its own user and mount namespace, bind-mounts
# /etc/shadow over every dump file it sees (a race a shell loop wins only now
# and then; check_targetfs makes the same mount deterministically).  Before
# the fix, root's prof dump -o wrote a copy of /etc/shadow (4 of 5 in the field).
t_bind_mount_over_the_dump_reads_nothing_of_root() {
	local pid i
	have_user || skip "no $TUSER user"
	# The mounting loop ends with the fixture (sh's pid, exec'd): it used to
	# spin on through the rest of the file.
	start_fixture_cmd pid setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups unshare -Urm sh -c \
		'(while kill -0 $$ 2>/dev/null; do for f in /tmp/jemattach.*/dump.heap /tmp/jemattach.*.heap; do
			[ -e "$f" ] && mount --bind /etc/shadow "$f" 2>/dev/null; done; done) &
		 exec env '"$PROF"' '"$(user_fixture jemfix)"
	for i in 1 2 3 4 5 6 7 8; do
		jm "$pid" prof dump -o "$TMPD/d$i.heap"
		[[ $RC == 0 || $RC == 5 || $RC == 1 ]] || fail "dump $i: exit $RC: $ERR"
		! grep -q '^root:' "$TMPD/d$i.heap" 2>/dev/null || fail "dump $i holds /etc/shadow"
		[[ $RC != 0 ]] || expect_match "$(head -1 "$TMPD/d$i.heap")" "^heap_v2/"
	done
	# The target is still fine, and what the attacker mounted is never root's.
	expect_eq "$(fix "$pid" ping)" "pong"
}

# Rows 3 and 4: another user plants FIFOs and symlinks in /tmp under every
# name jemattach might pick; the dump never opens them (a private 0700
# directory with an unguessable name), and the target never blocks.
t_planted_fifos_and_symlinks_are_never_opened() {
	local pid i
	have_user || skip "no $TUSER user"
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	for i in $(seq 0 20); do
		runuser -u "$TUSER" -- mkfifo "/tmp/jemattach.$pid.$((pid + i)).0.heap" 2>/dev/null || :
		runuser -u "$TUSER" -- ln -sf "$TMPD/victim" "/tmp/jemattach.$pid.$((pid + 100 + i)).0.heap" 2>/dev/null || :
	done
	runuser -u "$TUSER" -- mkfifo /tmp/jemattach.dump.heap 2>/dev/null || :
	echo precious >"$TMPD/victim"
	jm -vv -t 10 "$pid" prof dump -o "$TMPD/p.heap"
	rm -f /tmp/jemattach."$pid".*.heap /tmp/jemattach.dump.heap
	expect_rc 0
	expect_match "$ERR" "wrote /tmp/jemattach\.[0-9a-f]{24}/dump\.heap"
	expect_eq "$(cat "$TMPD/victim")" precious
	expect_eq "$(fix "$pid" ping)" "pong"
	# Nothing left behind in the target's /tmp.
	[[ -z $(dump_dirs_since "$TMPD/victim") ]] ||
		fail "a private dump directory was left in /tmp"
}

# Row 6: -o onto a device node writes into it and leaves it a device (a
# private node: 1,3 is /dev/null's), for the atomic prof dump -o too.
t_output_to_a_device_is_written_into_not_replaced() {
	local pid
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	mknod "$TMPD/null" c 1 3
	jm "$pid" prof dump -o "$TMPD/null"
	expect_rc 0
	jm "$pid" stats -o "$TMPD/null"
	expect_rc 0
	[[ -c $TMPD/null ]] || fail "$TMPD/null is no longer a device: $(ls -l "$TMPD/null")"
	[[ -z $(ls "$TMPD" | grep '\.tmp') ]] || fail "temporary file left: $(ls "$TMPD")"
	# A file that looks like our old temporary name does not matter.
	touch "$TMPD/p.heap.tmp$$"
	jm "$pid" prof dump -o "$TMPD/p.heap"
	expect_rc 0
}

# Row 4: another user's symlink in a sticky world-writable directory is not
# followed by any -o, whatever fs.protected_symlinks says.
t_symlink_of_another_user_in_a_sticky_dir_is_refused() {
	local pid
	have_user || skip "no $TUSER user"
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	chmod 0711 "$TMPD"	# the other user reaches shared/ (nothing else is listable)
	mkdir -m 1777 "$TMPD/shared"
	echo precious >"$TMPD/victim"
	runuser -u "$TUSER" -- ln -s "$TMPD/victim" "$TMPD/shared/out"
	runuser -u "$TUSER" -- ln -s "$TMPD" "$TMPD/shared/dir"
	jm "$pid" stats -o "$TMPD/shared/out"
	expect_rc 2
	expect_match "$ERR" "symlink owned by another user"
	jm "$pid" prof dump -o "$TMPD/shared/out"
	expect_rc 2
	jm "$pid" prof window 0.1 -o "$TMPD/shared/dir"
	expect_rc 2
	expect_eq "$(cat "$TMPD/victim")" precious
	# Our own symlink there is followed.
	ln -s "$TMPD/mine" "$TMPD/shared/ours"
	jm "$pid" stats -o "$TMPD/shared/ours"
	expect_rc 0
	[[ -s $TMPD/mine ]] || fail "own symlink not followed"
}

# --- Output files (issue 30): every file we write, through any path another
# user can touch.  The victims are root-only files; their checksums and the
# listing of their directory must not change.

# shared_dirs: $V (root's victims, 0700) and $S, a sticky world-writable
# directory the other user reaches (as /tmp), in a new $D (reachable).
shared_dirs() {
	chmod 0711 "$TMPD"
	D=$(mktemp -d "$TMPD/h.XXXX")
	chmod 0711 "$D"
	V=$D/v S=$D/shared
	mkdir -m 0700 "$V"
	mkdir -m 1777 "$S"
	for f in out out.svg dir; do echo "precious $f" >"$V/$f"; chmod 0600 "$V/$f"; done
	ln "$V/out" "$V/hardlinked"
}
victims() { (cd "$V" && ls -lAi --time-style=+ && sha256sum -- *); }
as_user() { setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups "$@"; }

# wr NAME ARGS...: jemattach ARGS, at most 15 s; "NAME RC: first line of
# stderr" appended to $TMPD/rcs.
wr() {
	local n=$1 rc=0; shift
	timeout 15 "$JEMATTACH" "$@" >/dev/null 2>"$TMPD/wr.err" </dev/null || rc=$?
	echo "$n $rc: $(head -1 "$TMPD/wr.err")" >>"$TMPD/rcs"
}

# writers PID OUT: every command that writes a file, writing OUT.
writers() {
	local pid=$1 o=$2
	: >"$TMPD/rcs"
	wr stats "$pid" stats -o "$o"
	wr dump "$pid" prof dump -o "$o"
	wr watch "$pid" watch -n 1 -o "$o"
	wr watch-prom "$pid" watch -n 1 --format prom -o "$o"
	wr track "$pid" prof track -n 1 -i 0.05 -o "$o"
	wr track-svg "$pid" prof track -n 1 -i 0.05 --svg "$o"
	wr analyze analyze "$TMPD/p.heap" -o "$o"
	wr report-svg report abs "$TMPD/series.jsonl" --svg "$o"
	wr window "$pid" prof window 0.05 -o "$o"
}

# expect_all_refused PATTERN: every writer exited 2 with a message matching.
expect_all_refused() {
	local line
	[[ $(wc -l <"$TMPD/rcs") == 9 ]] || fail "not every writer ran: $(cat "$TMPD/rcs")"
	while read -r line; do
		[[ $line =~ ^[a-z-]+\ 2:\ .*$1 ]] || fail "not refused (exit 2, /$1/): $line"
	done <"$TMPD/rcs"
}

# Inputs for analyze and report, and a profiling target.
writer_inputs() {
	start_fixture "$1" "$FIXTURES/jemfix" "$PROF"
	jm "${!1}" prof dump -o "$TMPD/p.heap"
	expect_rc 0
	jm "${!1}" watch -n 2 -i 0.05 -o "$TMPD/series.jsonl"
	expect_rc 0
}

# The other user's symlink in a middle component (/tmp/LINK/file), in first
# place after a directory of theirs, or in last place: no writer follows it.
# Before: each wrote root's file (10 of 10).
t_links_of_another_user_in_any_component_are_refused() {
	local pid before o
	have_user || skip "no $TUSER user"
	shared_dirs
	writer_inputs pid
	as_user ln -s "$V" "$S/LINK"
	as_user ln -s "$V/out" "$S/last"
	as_user mkdir "$S/hers"
	as_user ln -s "$V" "$S/hers/in"
	ln -s "$S/LINK" "$D/mine"	# a link of ours, to one of theirs
	before=$(victims)
	for o in "$S/LINK/out" "$S/last" "$S/hers/in/out" "$D/mine/out"; do
		writers "$pid" "$o"
		expect_all_refused "symlink owned by another user \(uid $(id -u "$TUSER")\): not followed"
	done
	expect_eq "$(victims)" "$before"
	expect_eq "$(fix "$pid" ping)" pong
}

# Every writer, 10 times, while the other user swaps a component between a
# directory of theirs and a link to root's directory: each is refused, and
# no root file changes.
t_racing_component_swaps_never_redirect_a_write() {
	local pid before i line
	have_user || skip "no $TUSER user"
	shared_dirs
	writer_inputs pid
	before=$(victims)
	start_bg RACER setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups sh -c "cd '$S' && while :; do
		rm -rf d; mkdir d; rm -rf d; ln -s '$V' d; done" 2>/dev/null
	trap 'kill "$RACER" 2>/dev/null || :' EXIT	# also when an expectation fails
	: >"$TMPD/all"
	for i in $(seq 10); do
		writers "$pid" "$S/d/out"
		cat "$TMPD/rcs" >>"$TMPD/all"
	done
	kill "$RACER"
	wait "$RACER" 2>/dev/null || :
	# Refused, or the name missing at that moment; never written, never a hang.
	expect_eq "$(wc -l <"$TMPD/all")" 90
	while read -r line; do
		[[ $line =~ ^[a-z-]+\ [12]:\ .*(by\ another\ user|belongs\ to\ another\ user|No\ such\ file) ]] ||
			fail "not refused: $line"
	done <"$TMPD/all"
	expect_eq "$(victims)" "$before"
}

# A directory another user owns, or can write and is not sticky: refused,
# whatever is in it.  A sticky one (/tmp) is fine.
t_directories_other_users_can_change_are_refused() {
	local pid before
	have_user || skip "no $TUSER user"
	shared_dirs
	writer_inputs pid
	before=$(victims)
	as_user mkdir "$S/hers"
	writers "$pid" "$S/hers/out"
	expect_all_refused "directory $S/hers belongs to another user \(uid $(id -u "$TUSER")\)"
	mkdir -m 0777 "$D/open"
	writers "$pid" "$D/open/out"
	expect_all_refused "directory $D/open is writable by other users and not sticky"
	[[ -z $(find "$S/hers" "$D/open" -mindepth 1) ]] || fail "written into: $(ls -lA "$S/hers" "$D/open")"
	# The default dump name, in a working directory of theirs.
	jm_run env -C "$S/hers" "$JEMATTACH" "$pid" prof dump
	expect_rc 2
	expect_match "$ERR" "belongs to another user"
	# Sticky and root's: written.
	jm "$pid" stats -o "$S/mine.txt"
	expect_rc 0
	[[ -s $S/mine.txt && $(stat -c %u "$S/mine.txt") == 0 ]] || fail "$S/mine.txt not written"
	expect_eq "$(victims)" "$before"
}

# The other user's FIFO at the output name hung stats, prof dump, watch and
# analyze -o (4 of 4), and a reader got root's output: now each writer is
# refused at once, reader or not; ours with no reader fails at once, ours with
# a reader gets the output.
t_fifos_never_block_and_another_users_is_refused() {
	local pid rpid t0
	have_user || skip "no $TUSER user"
	shared_dirs
	writer_inputs pid
	as_user mkfifo "$S/fifo"
	t0=$SECONDS
	writers "$pid" "$S/fifo"
	expect_all_refused "is a FIFO owned by another user \(uid $(id -u "$TUSER")\): refused"
	# With the other user reading it.
	start_bg rpid setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups \
		sh -c "exec cat '$S/fifo' >/dev/null"
	writers "$pid" "$S/fifo"
	kill "$rpid"
	expect_all_refused "FIFO owned by another user"
	((SECONDS - t0 < 90)) || fail "took $((SECONDS - t0)) s"
	# Ours, no reader: an error at once, no wait.
	mkfifo "$D/fifo"
	t0=$SECONDS
	jm "$pid" stats -o "$D/fifo"
	expect_rc 2
	expect_match "$ERR" "a FIFO with no reader"
	jm "$pid" prof dump -o "$D/fifo"
	expect_rc 1
	((SECONDS - t0 < 10)) || fail "waited $((SECONDS - t0)) s"
	# Ours, read: written into.
	start_bg rpid sh -c "exec cat '$D/fifo' >'$D/fifo.out'"
	wait_exe "$rpid" cat
	sleep 0.3	# cat in open(): a reader already
	jm "$pid" stats -o "$D/fifo"
	expect_rc 0
	wait "$rpid" || :
	expect_match "$(head -1 "$D/fifo.out")" "Begin jemalloc statistics"
	[[ -p $D/fifo ]] || fail "the FIFO was replaced"
}

# In a sticky directory, an existing device, or a hard link to any file that
# is not a regular one, could be one of root's another user linked there.
t_devices_and_hard_links_in_a_sticky_dir_are_refused() {
	local pid before
	shared_dirs
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	mknod "$S/null" c 1 3
	jm "$pid" stats -o "$S/null"
	expect_rc 2
	expect_match "$ERR" "is a device in a directory other users write: refused"
	mkfifo "$D/f1"
	ln "$D/f1" "$S/f2"
	jm "$pid" stats -o "$S/f2"
	expect_rc 2
	expect_match "$ERR" "is hard-linked a FIFO in a directory other users write"
	# A hard-linked regular file is replaced, not written through.
	ln "$V/out" "$S/out"
	before=$(sha256sum <"$V/out")
	jm "$pid" stats -o "$S/out"
	expect_rc 0
	expect_eq "$(sha256sum <"$V/out")" "$before"
	expect_match "$(head -1 "$S/out")" "Begin jemalloc statistics"
}

# prof window without -o: a fresh directory with a random name; the names a
# user pre-created (today's and the next minute's, with links to root's file
# inside) are never used.  Before: the existing directory was used and its
# links followed (10 of 10).
t_window_makes_a_fresh_directory() {
	local pid before t i d
	have_user || skip "no $TUSER user"
	shared_dirs
	start_fixture pid "$FIXTURES/jemfix" "$PROF"
	before=$(victims)
	for t in $(seq "$(date +%s)" $(($(date +%s) + 30))); do
		d="$S/jemattach-window.$pid.$t"
		as_user mkdir -m 0755 "$d"
		as_user ln -s "$V/out" "$d/base.heap"
		as_user ln -s "$V/out" "$d/window.heap"
	done
	for i in 1 2 3; do
		jm_run env -C "$S" "$JEMATTACH" "$pid" prof window 0.05
		expect_rc 0
		expect_match "$OUT" "jemattach-window\.$pid\.[0-9a-f]{8}/base\.heap"
	done
	expect_eq "$(find "$S" -maxdepth 1 -name "jemattach-window.$pid.*" -user 0 | wc -l)" 3
	expect_eq "$(victims)" "$before"
	# -o to their directory: refused.
	jm "$pid" prof window 0.05 -o "$S/jemattach-window.$pid.$t"
	expect_rc 2
	expect_eq "$(victims)" "$before"
}

# "-", /dev/stdout, /dev/stderr and /dev/null still work; /dev/fd/N is ours.
t_stdout_stderr_and_devnull_still_work() {
	local pid
	start_fixture pid "$FIXTURES/jemfix"
	jm "$pid" stats -o -
	expect_rc 0
	expect_match "$OUT" "Begin jemalloc statistics"
	jm "$pid" stats -o /dev/stdout
	expect_rc 0
	expect_match "$OUT" "Begin jemalloc statistics"
	jm "$pid" stats -o /dev/stderr
	expect_rc 0
	expect_match "$ERR" "Begin jemalloc statistics"
	jm "$pid" stats -o /dev/null
	expect_rc 0
	expect_eq "$OUT" ""
	RC=0; "$JEMATTACH" "$pid" stats -o /dev/fd/5 5>"$TMPD/fd5" || RC=$?
	expect_rc 0
	expect_match "$(head -1 "$TMPD/fd5")" "Begin jemalloc statistics"
}

# --- The process stays the process (issue 30).

# at_random PID: the address of its 16 AT_RANDOM bytes (auxv entry 25).
at_random() { od -An -tu8 -w16 -v "/proc/$1/auxv" | awk '$1 == 25 { print $2 }'; }

# reuse_scenario MODE DIR JEMATTACH JEMFIX: run as PID 1 of a new PID
# namespace, where PIDs are ours to choose.  Target A runs without address
# randomization; jemattach MODE (watch, track or shell) follows it; A exits
# and B, the same program started the same way, gets A's PID (ns_last_pid)
# and is given A's AT_RANDOM bytes: the same addresses, the same exec mark
# -- what another user's process of the same program could arrange.
# Writes what happened into DIR: a.pid, b.pid, lines.before, lines.after,
# rc, err.
reuse_scenario() {
	local mode=$1 d=$2 j=$3 f=$4 a b w addr lines i
	local conf=MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:12
	mkfifo "$d/a.in" "$d/b.in" "$d/sh.in"
	exec 3<>"$d/a.in" 4<>"$d/b.in" 5<>"$d/sh.in"
	setarch -R env "$conf" "$f" <&3 >"$d/a.out" &
	a=$!
	for i in $(seq 200); do grep -q ready "$d/a.out" && break; sleep 0.05; done
	addr=$(at_random "$a")
	dd if="/proc/$a/mem" of="$d/rnd" bs=16 count=1 skip="$addr" iflag=skip_bytes status=none
	case $mode in
	watch) "$j" "$a" watch -i 0.2 -n 40 >"$d/out" 2>"$d/err" & ;;
	track) "$j" "$a" prof track -i 0.2 -n 40 --format jsonl >"$d/out" 2>"$d/err" & ;;
	shell) "$j" "$a" shell <&5 >"$d/out" 2>"$d/err" & echo "get version" >&5 ;;
	esac
	w=$!
	for i in $(seq 300); do [[ -s $d/out ]] && break; sleep 0.05; done
	# Between two samples, not holding A's thread.
	for i in $(seq 50); do
		sleep 0.05
		kill -STOP "$w"
		[[ $(awk '/^TracerPid/ { print $2 }' "/proc/$a/status") == 0 ]] && break
		kill -CONT "$w"
	done
	wc -l <"$d/out" >"$d/lines.before"
	kill -KILL "$a"
	wait "$a" 2>/dev/null
	echo $((a - 1)) >/proc/sys/kernel/ns_last_pid
	setarch -R env "$conf" "$f" <&4 >"$d/b.out" &
	b=$!
	echo "$a" >"$d/a.pid"
	echo "$b" >"$d/b.pid"
	for i in $(seq 200); do grep -q ready "$d/b.out" && break; sleep 0.05; done
	[[ $(at_random "$b") == "$addr" ]] && dd if="$d/rnd" of="/proc/$b/mem" bs=16 count=1 \
		seek="$addr" oflag=seek_bytes conv=notrunc status=none
	kill -CONT "$w"
	[[ $mode == shell ]] && { sleep 0.5; echo "get version" >&5; sleep 0.5; echo "get version" >&5; exec 5>&-; }
	rc=0
	wait "$w" || rc=$?
	echo "$rc" >"$d/rc"
	wc -l <"$d/out" >"$d/lines.after"
	kill -KILL "$b"
}

# expect_reuse_stops MODE: after A exits and B takes its PID, jemattach MODE
# stops with "process A exited", having asked B nothing.  Before, with B's
# exec mark made A's, watch and track went on reporting B (40 of 40
# samples) and shell answered from B.
expect_reuse_stops() {
	local d
	d=$(mktemp -d "$TMPD/reuse.XXXX")
	export -f reuse_scenario at_random
	timeout 120 unshare --pid --fork --mount-proc bash -c 'reuse_scenario "$@"' _ \
		"$1" "$d" "$JEMATTACH" "$FIXTURES/jemfix" || :
	[[ -s $d/b.pid ]] || fail "the scenario did not run: $(cat "$d/err" 2>/dev/null)"
	[[ $(cat "$d/a.pid") == $(cat "$d/b.pid") ]] ||
		skip "B got PID $(cat "$d/b.pid"), not A's $(cat "$d/a.pid")"
	[[ -s $d/rc ]] || fail "jemattach $1 did not end in 120 s"
	expect_match "$(cat "$d/err")" "process $(cat "$d/a.pid") exited"
	(($(cat "$d/lines.after") <= $(cat "$d/lines.before") + 1)) ||
		fail "$1 went on with the other process: $(cat "$d/lines.before") lines, then $(cat "$d/lines.after")"
	RC=$(cat "$d/rc")
}

t_pid_reuse_stops_watch() {
	expect_reuse_stops watch
	expect_rc 1	# exited after fewer than -n samples (as when it just exits)
}

t_pid_reuse_stops_track() {
	expect_reuse_stops track
	expect_rc 3
}

t_pid_reuse_stops_shell() {
	expect_reuse_stops shell
	expect_rc 3
}

# A target whose AT_RANDOM bytes read as zeros: whether it executed another
# program cannot be told, so nothing is called in it.  Before: called.
t_zeroed_at_random_is_refused() {
	local pid addr
	start_fixture pid "$FIXTURES/jemfix"
	addr=$(at_random "$pid")
	dd if=/dev/zero of="/proc/$pid/mem" bs=16 count=1 seek="$addr" oflag=seek_bytes \
		conv=notrunc status=none
	jm "$pid" get version
	expect_rc 3
	expect_match "$ERR" "process $pid: its AT_RANDOM bytes could not be read or are zeros"
	expect_eq "$(fix "$pid" ping)" pong
}

# Row 10: hostile inputs: absurd timeouts, inputs that never end, names that act.
t_absurd_timeouts_are_usage_errors() {
	local t
	for t in 1e-300 -1 nan inf 0 1e9; do
		jm --timeout "$t" 1 get version
		expect_rc 2
		expect_match "$ERR" "invalid --timeout \"$t\": seconds, from 0.001 to 86400"
	done
}

t_fifo_and_device_inputs_are_refused_before_reading() {
	mkfifo "$TMPD/fifo"
	RC=0; ERR=$(timeout 20 "$JEMATTACH" analyze "$TMPD/fifo" 2>&1 >/dev/null) || RC=$?
	expect_rc 2; expect_match "$ERR" "not a regular file"
	RC=0; ERR=$(timeout 20 "$JEMATTACH" analyze /dev/zero 2>&1 >/dev/null) || RC=$?
	expect_rc 2; expect_match "$ERR" "not a regular file"
	RC=0; ERR=$(timeout 20 "$JEMATTACH" report abs "$TMPD/fifo" 2>&1 >/dev/null) || RC=$?
	expect_rc 2; expect_match "$ERR" "not a regular file"
}

t_names_that_act_are_refused_unless_forced() {
	local pid n
	start_fixture pid "$FIXTURES/jemfix"
	n=$(fix "$pid" "get u arenas.narenas")
	jm "$pid" get arenas.create
	expect_rc 2
	expect_match "$ERR" "get arenas.create refused: reading it creates .*\(--force to do it anyway\)"
	jm "$pid" get arena.0.reset
	expect_rc 2
	jm "$pid" get thread.allocated
	expect_rc 2
	expect_match "$ERR" "the one jemattach borrows"
	jm "$pid" set thread.prof.name x
	expect_rc 2
	expect_match "$ERR" "set thread.prof.name refused: thread.\* names act on"
	expect_eq "$(fix "$pid" "get u arenas.narenas")" "$n"
	jm --force "$pid" get arenas.create
	expect_rc 0
	expect_eq "$(fix "$pid" "get u arenas.narenas")" "$((n + 1))"
}

run_tests
