#!/bin/bash
# 86-census-hostile.sh -- a census of a process whose user made jemalloc's
# bookkeeping lie (issue 41): the threads are stopped no longer than the
# timeout allows, and what the census costs root is bounded by the memory
# the target really has.  The target (liarfix, Debian's jemalloc 5.3 on
# x86_64: it writes that layout) runs as an unprivileged user.
source tests/lib.sh
TUSER=jmatest
# Memory bounds do not hold under ASan (its shadow and redzones): measured, not asserted.
grep -q __asan_init "$JEMATTACH" && ASAN=1 || ASAN=0

have_user() {
	id "$TUSER" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$TUSER" 2>/dev/null
	id "$TUSER" >/dev/null 2>&1
}

# liar VAR: liarfix as $TUSER, its map's root in $ROOT (for the fake-* commands).
liar() {
	have_user || skip "no $TUSER user"
	[[ $(uname -m) == x86_64 ]] || skip "liarfix writes jemalloc 5.3's x86_64 layout"
	chmod 0711 "$TMPD"
	start_fixture_cmd "$1" setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups \
		"$FIXTURES/liarfix"
	local pid=${!1}
	jm "$pid" census --json --no-stats
	expect_rc 0
	[[ $(jq -r .layout <<<"$OUT") == 5.3* ]] || skip "jemalloc $(jq -r .version <<<"$OUT"): not 5.3"
	ROOT=$(printf '%x' $(($(jq -r .map <<<"$OUT") + 0x78)))
}

# census_measured ARGS...: jemattach ARGS under /usr/bin/time: $RC, $OUT,
# $ERR, and its wall seconds (WALL, a decimal) and peak memory (RSS_KB).
census_measured() {
	RC=0
	/usr/bin/time -f '%e %M' -o "$TMPD/time" "$JEMATTACH" "$@" >"$TMPD/out" 2>"$TMPD/err" || RC=$?
	OUT=$(cat "$TMPD/out") ERR=$(cat "$TMPD/err")
	read -r WALL RSS_KB < <(tail -n 1 "$TMPD/time")
	echo "    jemattach $*: exit $RC, $WALL s, $RSS_KB KiB" >&2
}

# expect_running PID: not left stopped, and still answering.
expect_running() {
	local st
	st=$(awk '/^State:/ {print $2}' "/proc/$1/status")
	[[ $st != [tT] ]] || fail "process $1 left stopped ($st)"
	expect_eq "$(fix "$1" ping)" pong
}

# 400 threads whose 73 cache bins each claim 8191 items, all on the same
# 64 KiB: before, 25-46 s stopped with -t 2 and 3.75 GB.  Now each bin is
# believed only as far as a stack of its own can hold: the census ends
# within -t and 5 s, in under 200 MiB, saying what it did not believe.
t_lying_caches() {
	local pid
	liar pid
	expect_eq "$(fix "$pid" "threads 400")" ok
	expect_match "$(fix "$pid" lie-bins)" "^ok 29200$"
	census_measured -t 2 "$pid" census --no-stats
	expect_rc 0
	expect_match "$OUT" "thread-cache bins claimed more than a stack of theirs can hold"
	awk -v w="$WALL" 'BEGIN { exit !(w <= 2 + 5) }' || fail "took $WALL s with -t 2"
	((ASAN || RSS_KB < 200 * 1024)) || fail "took $RSS_KB KiB"
	expect_running "$pid"
}

# Fake one-page slabs of 8-byte blocks (512 blocks per 128-byte record) in
# a PROT_NONE reservation: before, a 12 MB target cost root 1.35-2.08 GB
# and a 571 MB --blocks file.  Extents in memory nobody can read hold
# nothing: skipped, and said.
t_fake_slabs_unreadable() {
	local pid
	liar pid
	expect_eq "$(fix "$pid" "fake-slabs $ROOT 20000 none")" ok
	census_measured "$pid" census --no-stats --by type --blocks "$TMPD/blocks"
	expect_rc 0
	expect_match "$OUT" "note: [0-9]{5,} map entries"
	((ASAN || RSS_KB < 100 * 1024)) || fail "took $RSS_KB KiB"
	(($(wc -l <"$TMPD/blocks") < 100000)) || fail "$(wc -l <"$TMPD/blocks") blocks listed"
	expect_running "$pid"
}

# The same in read-write memory never touched: the blocks are believed (a
# slab whose blocks were never written is real enough), but they cost root
# at most a byte for each byte of the memory they claim, beyond what the
# census costs anyway (here 80 MB claimed: 10 million blocks; before 415 MB).
t_fake_slabs_readable() {
	local pid base
	liar pid
	census_measured "$pid" census --no-stats --leaks
	expect_rc 0
	base=$RSS_KB
	expect_eq "$(fix "$pid" "fake-slabs $ROOT 20000 read")" ok
	census_measured "$pid" census --no-stats --leaks --by type
	expect_rc 0
	expect_match "$OUT" "live: 1024[0-9]{4} blocks"
	((ASAN || RSS_KB - base < 80 * 1024)) || fail "took $RSS_KB KiB (the census alone: $base KiB)"
	expect_running "$pid"
}

# One fake large extent of 64 GiB in memory never written: before, --leaks
# read all of it (12-20 s, 50-70 s here).  Now pages the target does not
# have are not read, and no pass reads more than it has and 64 MiB.
t_fake_huge_extent() {
	local pid
	liar pid
	expect_eq "$(fix "$pid" "fake-huge $ROOT 64")" ok
	census_measured "$pid" census --no-stats --leaks
	expect_rc 0
	expect_match "$OUT" "live: [0-9]+ blocks, 64.0 GiB"
	awk -v w="$WALL" 'BEGIN { exit !(w <= 10) }' || fail "--leaks took $WALL s"
	expect_running "$pid"
}

# A map naming millions of extents (16 leaves of distinct words, 32 MB):
# before, 925 MB reserved up front.  Now the room made before the stop is
# what the target's memory can hold (an extent has an edata of 128 bytes).
t_fake_map_words() {
	local pid
	liar pid
	expect_eq "$(fix "$pid" "fake-words $ROOT 16")" ok
	census_measured "$pid" census --no-stats
	expect_rc 0
	((ASAN || RSS_KB < 128 * 1024)) || fail "took $RSS_KB KiB"
	expect_running "$pid"
}

run_tests
