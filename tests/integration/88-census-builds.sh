#!/bin/bash
# 88-census-builds.sh -- the census on jemalloc as projects build it, and on extents the kernel split.
#
# CB_BUILDS names the builds under build/census-builds/ (scripts/build-jemalloc.sh's
# NAME flags: 5.3.0-redis is jemalloc configured as Redis's deps/Makefile does and
# linked statically with je_ names, 5.3.0-tikv as tikv-jemalloc-sys does, 5.3.0-vaddr57
# made on a host with 57-bit addresses, page14/page16 16 and 64 KiB pages); make check
# builds a few, make check-versions all of them.  Each is censused live and from a
# gcore core, with symbols, stripped and with its symbols in a separate file (the
# static ones): every block censusfix recorded is found with its usable size, no freed
# one is live, live + thread-cached = stats.allocated, and "exact" is said only with
# the thread caches read.  A build whose source could not be had is one skipped test,
# with the reason.  On Debian's library: extents split into several mappings by
# mlock, mprotect and madvise (Traffic Server's MADV_DONTDUMP I/O buffers), and
# san_guard's guard pages.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh
source tests/lib-census.sh
CB_DIR=$(readlink -f "${CB_DIR:-build/census-builds}")
# By default every build there.
CB_BUILDS=${CB_BUILDS:-$(cd "$CB_DIR" 2>/dev/null && ls -d -- */ | tr -d /)}

# expect_exact: the text census of PID (or core CORE) ends its sum with "(exact)",
# the thread caches read.
expect_exact() {
	jm "$@" census
	expect_rc 0
	expect_match "$OUT" "stats.allocated: [0-9]+ = live \+ thread-cached \(exact\)"
	[[ $OUT == *disagreed* ]] && fail "entries skipped: $(grep note: <<<"$OUT")"
	return 0
}

# build_layout B: what the census must call build B's layout.
build_layout() {
	local l=5.3 what=""
	[[ $1 == 5.2.* ]] && l=5.2
	[[ $1 == *redis* ]] && what+=" q8"
	[[ $1 == *vaddr57* ]] && what+=" 57-bit"
	[[ $1 == *page14* ]] && what+=" 16K"
	[[ $1 == *page16* ]] && what+=" 64K"
	echo "$l${what:+ (${what# })}"
}

# core_of PID TAG: a gcore core of PID in $TMPD/TAG.core, and stats.allocated as the
# fixture read it just before in CORE_ALLOC.
core_of() {
	command -v gcore >/dev/null || skip "no gcore"
	CORE_ALLOC=$(fix "$1" allocated | sed 's/^ok //')
	gcore -o "$TMPD/c.tmp" "$1" >/dev/null 2>&1 || fail "gcore $1 failed"
	mv "$TMPD/c.tmp.$1" "$TMPD/$2.core"
}

# one_build B: each fixture variant of build B, live; the unstripped one from a core.
# The sum is compared with stats.allocated as the fixture reads it itself: nothing
# can be called in a program stripped of every symbol (tikv's, stripped).
one_build() {
	local b=$1 dir=$CB_DIR/$1 f pid n=0
	for f in censusfix censusfix-stripped censusfix-debuglink; do
		[[ -x $dir/$f ]] || continue
		start_fixture pid "$dir/$f"
		census_fill "$pid"
		census_lists "$pid" "$b-$f"
		census_check "$b-$f" "$pid"
		expect_eq "$CENSUS_SUM" "$(fix "$pid" allocated | sed 's/^ok //')"
		((CENSUS_CACHED > 0)) || fail "$b-$f: no thread-cached block found"
		expect_eq "$(jq -r .layout <<<"$CENSUS_JSON")" "$(build_layout "$b")"
		expect_eq "$(jq -r .thread_caches_read <<<"$CENSUS_JSON")" true
		if [[ $f == censusfix-stripped ]]; then
			expect_match "$(jq -r .map_how <<<"$CENSUS_JSON")" "decoded|lookup cache"
		fi
		# Where something can be called, the tool's own reading agrees.
		if [[ $f != censusfix-stripped || $b == *redis* ]]; then
			expect_exact "$pid"
		fi
		n=$((n + 1))
	done
	((n > 0)) || fail "$b: no fixture built (make census-builds)"
	start_fixture pid "$dir/censusfix"
	census_fill "$pid"
	census_lists "$pid" "core-$b"
	core_of "$pid" "$b"
	census_check "core-$b" core "$TMPD/$b.core"
	expect_eq "$CENSUS_SUM" "$CORE_ALLOC"
	expect_exact core "$TMPD/$b.core"
	rm -f "$TMPD/$b.core"
}

for b in $CB_BUILDS; do
	id=${b//[.-]/_}
	# No source for it here (scripts/build-jemalloc.sh wrote why): skipped, not passed.
	if [[ -f $CB_DIR/$b/unavailable ]]; then
		eval "t_${id}() { skip \"jemalloc build $b: source not available: \$(cat '$CB_DIR/$b/unavailable')\"; }"
		continue
	fi
	eval "t_${id}() { one_build $b; }"
done

# An extent is one range whatever the kernel made of it: mlock of 8 bytes of a
# slab's block, a page of a large block made read-only, unreadable, or left out
# of cores.  Only the unreadable page's contents are missed, and counted.
t_split_mappings() {
	local pid how
	start_fixture pid "$FIXTURES/censusfix"
	census_fill "$pid"
	for how in mlock readonly noaccess dontdump; do
		expect_match "$(fix "$pid" "split $how")" "^ok 0x"
	done
	census_exact "$pid" split
	expect_exact "$pid"
	jm "$pid" census --leaks --no-stats
	expect_rc 0
	# The PROT_NONE page is read all the same (/proc/PID/mem, as attach/mem.c
	# falls back to): the block's pointers are seen, nothing is called leaked.
	expect_match "$OUT" "leaked: 0 blocks"
	[[ $OUT == *"could not be read"* ]] && fail "a page that was read is called unread: $OUT"
	core_of "$pid" split
	census_check split core "$TMPD/split.core"
	expect_eq "$CENSUS_SUM" "$CORE_ALLOC"
	expect_exact core "$TMPD/split.core"
}

# Traffic Server under LD_PRELOAD of Debian's library lost 6 large blocks: it
# madvise(MADV_DONTDUMP)s its I/O buffers whole, so the kernel ends a mapping at
# each buffer's end, and jemalloc's extent runs a page further (its
# cache-oblivious pad).  gcore then leaves the buffers out of the core: their
# blocks are still counted, from jemalloc's metadata, and the output says so --
# and does not offer a changing heap as a cause on a core.
t_traffic_server_iobufs() {
	local pid
	start_fixture pid "$FIXTURES/censusfix"
	census_fill "$pid"
	expect_eq "$(fix "$pid" "iobufs 6 524288")" ok
	census_exact "$pid" iobufs
	expect_exact "$pid"
	core_of "$pid" iobufs
	census_check iobufs core "$TMPD/iobufs.core"
	expect_eq "$CENSUS_SUM" "$CORE_ALLOC"
	expect_match "$(jq -r .warning <<<"$CENSUS_JSON")" \
		"^6 extents lie partly in memory the core does not hold \(3145728 bytes; MADV_DONTDUMP\)"
	jm core "$TMPD/iobufs.core" census --no-stats
	expect_rc 0
	[[ $OUT == *"heap changed"* ]] && fail "a core's census offers a changing heap: $OUT"
	return 0
}

# san_guard_small/large put guard pages (PROT_NONE mappings) around extents.
t_san_guard() {
	local pid
	start_fixture pid "$FIXTURES/censusfix" MALLOC_CONF=san_guard_small:1,san_guard_large:1
	census_fill "$pid"
	census_exact "$pid" guard
	expect_exact "$pid"
}

run_tests
