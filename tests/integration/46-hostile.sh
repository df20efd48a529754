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
	start_fixture_cmd pid setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups unshare -Urm sh -c \
		'(while :; do for f in /tmp/jemattach.*/dump.heap /tmp/jemattach.*.heap; do
			[ -e "$f" ] && mount --bind /etc/shadow "$f" 2>/dev/null; done; done) &
		 exec env '"$PROF"' '"$FIXTURES/jemfix"
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
