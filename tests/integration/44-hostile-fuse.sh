#!/bin/bash
# 44-hostile-fuse.sh -- target memory behind a file system that never answers
# (issue 41; doc/safety-input.md).  The target's user mounts hangfs (a FUSE
# file system whose reads are never answered: tests/fixtures/hangfs.c) with
# Debian's setuid fusermount3, and maps its file as code (as a library would
# be) and under a thread's thread pointer (where the census reads the
# thread's jemalloc data with every thread stopped).  Before, root's info,
# get and census slept in the kernel for good, through SIGKILL, the census
# with every thread of the target stopped.
# runner: light (beside a long file: its bounds are twice the --timeout it gives)
. "$(dirname "$0")/../lib.sh"
TUSER=jmatest
FUSE_MODE=$(stat -c %a /dev/fuse 2>/dev/null)

have_user() {
	id "$TUSER" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$TUSER" 2>/dev/null
	id "$TUSER" >/dev/null 2>&1
}

as_user() { setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups "$@"; }

# Whatever a test left mounted is unmounted, and /dev/fuse's mode restored,
# however the script ends (tests run in subshells: the list is a file).
fuse_cleanup() {
	local m
	while read -r m; do
		fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done < <(cat "$TMPD/mounts" 2>/dev/null)
	[[ -z $FUSE_MODE ]] || chmod "$FUSE_MODE" /dev/fuse
}
trap 'fuse_cleanup; cleanup' EXIT

# mount_hangfs VAR MNT: hangfs mounted at MNT by the target's user (its pid
# in VAR).  /dev/fuse is 0600 where no udev made it 0666: opened to others
# for the mount only.
mount_hangfs() {
	local __v=$1 mnt=$2
	have_user || skip "no $TUSER user"
	[[ -c /dev/fuse ]] || skip "no /dev/fuse"
	command -v fusermount3 >/dev/null || skip "no fusermount3 (Debian's fuse3: make deps)"
	[[ -x $FIXTURES/hangfs ]] || skip "no hangfs fixture (libfuse3-dev: make deps, then make)"
	chmod 0711 "$TMPD"
	mkdir -p "$mnt" && chown "$TUSER" "$mnt"
	echo "$mnt" >>"$TMPD/mounts"
	chmod 0666 /dev/fuse
	start_fixture_cmd "$__v" setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups \
		"$FIXTURES/hangfs" "$mnt"
	chmod "$FUSE_MODE" /dev/fuse
	grep -q " $mnt fuse.hangfs " /proc/self/mounts || fail "hangfs is not mounted at $mnt"
}

# hostile_target VAR MNT: a jemalloc process of the target's user with
# MNT/f mapped as code and under a sleeping thread's thread pointer.
hostile_target() {
	local __p
	start_fixture_cmd __p setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups \
		"$FIXTURES/hostilefix"
	expect_eq "$(fix "$__p" "map $2/f")" ok
	expect_eq "$(fix "$__p" "tls $2/f")" ok
	printf -v "$1" '%s' "$__p"
}

# jm_bounded LIMIT ARGS...: jemattach ARGS in the background, waited for up
# to LIMIT s: RC, ERR, MS (its run time) when it ended; a failure when not
# (it is then SIGKILLed, and the test's end takes the file system away).
jm_bounded() {
	local limit=$1 t0 p
	shift
	t0=${EPOCHREALTIME/./}
	"$JEMATTACH" "$@" >"$TMPD/out" 2>"$TMPD/err" &
	p=$!
	STARTED+=("$p")
	RC=""
	for _ in $(seq $((limit * 20))); do
		child_state "$p"
		[[ -z $CHILD_STATE || $CHILD_STATE == Z ]] && break
		sleep 0.05
	done
	MS=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
	child_state "$p"
	if [[ -n $CHILD_STATE && $CHILD_STATE != Z ]]; then
		kill -KILL "$p"
		fail "jemattach $*: still running after $limit s (state $CHILD_STATE, in $(cat "/proc/$p/wchan" 2>/dev/null))"
		return 1
	fi
	RC=0
	wait "$p" || RC=$?
	ERR=$(cat "$TMPD/err")
	echo "    (jemattach $*: exit $RC after $MS ms)" >&2
}

# Live: the mappings are FUSE's, as the target's mountinfo says; they are
# refused at once, whatever reads them (the symbol cache's key, the
# unwinder, the census's thread data), and the command goes on without them.
t_fuse_memory_is_refused_at_once() {
	local fs pid cmd mnt="$TMPD/mnt"
	mount_hangfs fs "$mnt"
	hostile_target pid "$mnt"
	for cmd in info "get version stats.allocated" census threads stats; do
		jm_bounded 30 -t 5 "$pid" $cmd
		# One timeout at most (none is expected), and what follows it.
		(( MS <= 10000 )) || fail "$cmd took $MS ms with -t 5"
		[[ $RC == 0 ]] || fail "$cmd: exit $RC: $ERR"
		expect_not_stopped "$pid"
	done
	jm_bounded 30 -t 5 "$pid" census
	expect_match "$ERR" "$mnt/f \(fuse.hangfs\)"
	expect_eq "$(fix "$pid" ping)" pong
}

# serve selecting the target: its scans refuse the FUSE memory at once, so
# /metrics and /targets answer, the target is up, and SIGTERM ends serve.
# (Before, the scanner slept in the kernel holding the target list.)
t_fuse_memory_leaves_serve_answering() {
	local fs pid sp port code t0 mnt="$TMPD/mnt"
	mount_hangfs fs "$mnt"
	hostile_target pid "$mnt"
	for _ in 1 2 3; do
		port=$(free_port) || fail "no free port"
		"$JEMATTACH" serve --listen "127.0.0.1:$port" --target "pid=$pid" 2>"$TMPD/serve.err" &
		sp=$!
		STARTED+=("$sp")
		for _ in $(seq 300); do
			grep -q serving "$TMPD/serve.err" && break 2
			kill -0 "$sp" 2>/dev/null || break
			sleep 0.05
		done
	done
	grep -q serving "$TMPD/serve.err" || fail "serve did not start: $(cat "$TMPD/serve.err")"
	for _ in 1 2 3; do
		t0=${EPOCHREALTIME/./}
		code=$(curl -s -o "$TMPD/metrics" -w '%{http_code}' --max-time 30 "http://127.0.0.1:$port/metrics") || true
		echo "    (/metrics: $code after $(( (${EPOCHREALTIME/./} - t0) / 1000 )) ms)" >&2
		expect_eq "$code" 200
	done
	expect_match "$(cat "$TMPD/metrics")" "jemattach_target_up\{pid=\"$pid\"[^}]*\} 1"
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 "http://127.0.0.1:$port/targets") || true
	expect_eq "$code" 200
	expect_not_stopped "$pid"
	kill -TERM "$sp"
	for _ in $(seq 100); do
		child_state "$sp"
		[[ -z $CHILD_STATE || $CHILD_STATE == Z ]] && break
		sleep 0.05
	done
	[[ -z $CHILD_STATE || $CHILD_STATE == Z ]] || fail "serve still there 5 s after SIGTERM"
}

# The same file system detached (umount -l by its user): no namespace lists
# it any more, so unless fusectl is mounted (it lists every FUSE connection)
# nothing tells what backs the mapping.  The read is then made by a helper
# process that is given up on at the timeout: every command ends within it,
# SIGKILL ends jemattach at once, and the target is never left stopped.
t_fuse_reads_end_at_the_timeout_and_sigkill_ends_them() {
	local fs pid cmd jp mnt="$TMPD/mnt"
	mount_hangfs fs "$mnt"
	hostile_target pid "$mnt"
	as_user fusermount3 -u -z "$mnt" || fail "fusermount3 -u -z failed"
	for cmd in census info "get version"; do
		jm_bounded 30 -t 3 "$pid" $cmd
		(( MS <= 8000 )) || fail "$cmd took $MS ms with -t 3"
		expect_not_stopped "$pid"
	done
	# A long timeout, and SIGKILL while the census waits on the page.
	"$JEMATTACH" -t 60 "$pid" census >/dev/null 2>&1 &
	jp=$!
	STARTED+=("$jp")
	sleep 2
	kill -KILL "$jp" 2>/dev/null || true
	for _ in $(seq 40); do
		child_state "$jp"
		[[ -z $CHILD_STATE || $CHILD_STATE == Z ]] && break
		sleep 0.05
	done
	[[ -z $CHILD_STATE || $CHILD_STATE == Z ]] ||
		fail "jemattach still there 2 s after SIGKILL (state $CHILD_STATE, in $(cat "/proc/$jp/wchan" 2>/dev/null))"
	wait "$jp" 2>/dev/null || true
	expect_not_stopped "$pid"
	expect_eq "$(fix "$pid" ping)" pong
}

run_tests
