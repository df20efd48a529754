#!/bin/bash
# 47-exec.sh -- a process that exec()s while jemattach works on it: never a
# call to the old program's addresses (issue 17 row 10).
# runner: light (beside a long file: no clock in its assertions)
. "$(dirname "$0")/../lib.sh"

# exec_loop [WRAPPER...]: 30 gets on a fixture that keeps exec'ing itself.
exec_loop() {
	local pid i rc3=0
	start_fixture_cmd pid "$@" "$FIXTURES/execloop" 100000
	for i in $(seq 30); do
		jm "$pid" get version
		case $RC in
		0) expect_match "$OUT" "^5\." ;;
		3) expect_match "$ERR" "process $pid (executed a new program|exited|was loading code)"
		   rc3=$((rc3 + 1)) ;;
		*) fail "run $i: exit $RC: $ERR" ;;
		esac
	done
	# The process survived every run: still there, still exec'ing.
	kill -0 "$pid" || fail "process $pid died"
	[[ $(awk '{print $3}' "/proc/$pid/stat") != Z ]] || fail "process $pid died"
	echo "    ($rc3 of 30 runs met an exec)"
	# A trampoline searched for in maps an exec had just replaced is not
	# known, never kept as missing: every later run on this program was
	# refused (exit 5 when it did not exec within 70 ms, as under ASan).
	! grep -rqs '^restorer=none' "$XDG_CACHE_HOME" || fail "the symbol cache keeps restorer=none"
}

t_exec_between_open_and_call_is_exit_3() {
	exec_loop
}

# Without address-space randomization the vDSO does not move at exec: the
# check falls back to the maps.
t_exec_without_aslr_is_exit_3() {
	exec_loop setarch -R
}

# A process caught while its loader maps the program it just executed:
# libjemalloc mapped, libc not yet (an audit module holds the loader there).
# A session opened then reads those maps; by its first command the program
# runs in libc, which those maps do not have: its thread unwinds no further
# and the words on its stack from jemalloc's start-up look like a thread
# inside jemalloc.  That is maps read mid-load, exit 3 (as execloop meets it
# now and then), not a process with no safe thread (exit 5).
t_program_still_loading_when_read_is_exit_3() {
	local pid d jpid cmds stall
	d=$TMPD/stall
	mkdir "$d"
	mkfifo "$d/loadstall" "$TMPD/cmds"
	# Room in the static TLS block for libjemalloc's with an audit module loaded.
	spawn_fixture pid sh -c 'cd "$0" && exec env GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536 \
		LD_AUDIT="$1" "$2"' "$d" "$FIXTURES/libloadstall.so" "$FIXTURES/jemfix"
	for _ in $(seq 200); do
		grep -q libjemalloc "/proc/$pid/maps" 2>/dev/null && break
		sleep 0.05
	done
	grep -q libjemalloc "/proc/$pid/maps" || fail "the loader did not map libjemalloc"
	! grep -q '/libc\.so' "/proc/$pid/maps" || fail "libc is mapped already"
	start_bg jpid sh -c 'exec "$0" -v "$1" - <"$2" >"$3" 2>"$4"' "$JEMATTACH" "$pid" \
		"$TMPD/cmds" "$TMPD/jout" "$TMPD/jerr"
	exec {cmds}>"$TMPD/cmds"
	for _ in $(seq 600); do
		grep -q 'jemalloc in ' "$TMPD/jerr" && break
		sleep 0.05
	done
	grep -q 'jemalloc in ' "$TMPD/jerr" || fail "the session did not open: $(cat "$TMPD/jerr")"
	# The loader goes on (the module reads its FIFO to the end); the program starts.
	exec {stall}>"$d/loadstall"
	exec {stall}>&-
	fixture_ready "$pid"
	echo "get version" >&"$cmds"
	exec {cmds}>&-
	RC=0
	wait "$jpid" || RC=$?
	ERR=$(cat "$TMPD/jerr")
	expect_rc 3
	expect_match "$ERR" "process $pid was loading code when jemattach read its maps"
	expect_eq "$(fix "$pid" ping)" pong
}

run_tests
