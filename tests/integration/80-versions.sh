#!/bin/bash
# 80-versions.sh -- the jemalloc-facing commands on every jemalloc version we build.
#
# JE_VERSIONS names the builds under build/versions/ (scripts/build-jemalloc.sh;
# "5.2.1-je_" is 5.2.1 with the je_ prefix); make check builds a few, make
# check-versions all of them.  A version whose source could not be had (no
# network, no JEMALLOC_SRC) is one skipped test, with the reason.  Each version gets its own test functions, named
# after it, and every value is compared with what the fixture reads itself.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh
VERSIONS_DIR=$(readlink -f "${VERSIONS_DIR:-build/versions}")
# By default every build there (its folders; each has a .lock file beside it).
JE_VERSIONS=${JE_VERSIONS:-$(cd "$VERSIONS_DIR" 2>/dev/null && ls -d -- */ | tr -d /)}

# ver_num "5.2.1-0-g..." -> 50201, for comparisons.
ver_num() { awk -F'[.-]' '{ printf "%d%02d%02d\n", $1, $2, $3 }' <<<"$1"; }

# start V VAR [CONF]: the version's jemfix, with MALLOC_CONF (and JE_MALLOC_CONF
# for the je_ build) set to CONF.
start() {
	local v=$1 __v=$2 conf=${3:-}
	start_fixture "$__v" "$VERSIONS_DIR/$v/jemfix" "MALLOC_CONF=$conf" "JE_MALLOC_CONF=$conf"
}

v_get() {
	local v=$1 pid ver n
	start "$v" pid
	ver=$(fix "$pid" "get s version")
	n=$(ver_num "$ver")
	jm "$pid" get version
	expect_rc 0; expect_eq "$OUT" "$ver"
	fix "$pid" "alloc 200 4000" >/dev/null
	jm "$pid" get stats.allocated
	expect_rc 0
	within "$OUT" "$(fix "$pid" "get z stats.allocated")" 65536
	# A name no table knows: its type is probed, whatever the version's mallctl
	# does with a size mismatch.
	jm --force "$pid" get thread.allocatedp
	expect_rc 0; expect_match "$OUT" '^[1-9][0-9]*$'
	jm "$pid" get --type uint64_t stats.allocated
	expect_rc 0; expect_match "$OUT" '^[1-9][0-9]*$'
	if ((n < 50000)); then
		jm "$pid" get stats.cactive
		expect_rc 0; expect_eq "$OUT" "$(fix "$pid" "get zp stats.cactive")"
	else
		jm "$pid" get stats.cactive
		expect_rc 4; expect_match "$ERR" "removed in 5.0.0"
	fi
	if ((n < 40000)); then
		jm "$pid" get opt.narenas opt.junk arenas.nlruns
		expect_rc 0
		expect_match "$OUT" "opt.narenas $(fix "$pid" "get z opt.narenas")"
		expect_match "$OUT" "opt.junk (true|false)"
	fi
	if ((n >= 40000 && n < 50000)); then
		jm "$pid" get opt.thp
		expect_rc 0; expect_match "$OUT" '^(true|false)$'
	fi
	# A name this version lacks does not hide the others.
	jm "$pid" get version no.such.name
	expect_rc 1; expect_match "$OUT" "version $ver"
}

v_stats() {
	local v=$1 pid n
	start "$v" pid
	n=$(ver_num "$(fix "$pid" "get s version")")
	jm "$pid" stats
	expect_rc 0; expect_match "$(head -1 <<<"$OUT")" "Begin jemalloc statistics"
	jm "$pid" stats --json
	if ((n >= 40300)); then
		expect_rc 0
		expect_eq "$(jq -r .jemalloc.version <<<"$OUT")" "$(fix "$pid" "get s version")"
	else
		expect_rc 4; expect_match "$ERR" "no JSON"
	fi
}

v_purge_decay_watch() {
	local v=$1 pid n
	start "$v" pid
	n=$(ver_num "$(fix "$pid" "get s version")")
	fix "$pid" "alloc 2000 4000" >/dev/null; fix "$pid" "free" >/dev/null
	jm "$pid" watch -n 1 --arenas
	expect_rc 0
	expect_eq "$(jq '.arenas | length > 0' <<<"$OUT")" true
	expect_eq "$(jq '.dirty > 0' <<<"$OUT")" true
	jm "$pid" purge
	expect_rc 0
	if ((n >= 50000)); then
		expect_match "$OUT" "dirty +[1-9][0-9]* -> 0 "
	else
		# 3.x/4.x keep one whole chunk as the arena's spare, counted dirty.
		local after
		after=$(awk '/dirty/ { print $4 }' <<<"$OUT")
		within "${after:-x}" 256 256
	fi
	jm "$pid" decay 0
	if ((n < 40000)); then
		expect_rc 4; expect_match "$ERR" "added in 4.0"
	else
		expect_rc 0
	fi
	if ((n >= 40000 && n < 50000)); then
		jm "$pid" set arenas.decay_time 5
		expect_rc 4; expect_match "$ERR" "purge:decay"
	fi
}

v_prof() {
	local v=$1 pid n bin active=false
	# 5.2.x never samples a thread that allocated while profiling was inactive
	# (upstream 1605/2231): there the fixture starts active, and prof on must
	# say why that matters.
	[[ $v == 5.2.* ]] && active=true
	start "$v" pid "prof:true,prof_active:$active,lg_prof_sample:10"
	n=$(ver_num "$(fix "$pid" "get s version")")
	jm "$pid" prof on
	expect_rc 0
	if ((n >= 50200 && n < 50300)); then expect_match "$ERR" "1605"; fi
	fix "$pid" "alloc 3000 2048" >/dev/null
	jm "$pid" prof dump -o "$TMPD/p.heap"
	expect_rc 0
	if ((n < 40000)); then
		expect_match "$(head -1 "$TMPD/p.heap")" "^heap profile:"
	else
		expect_match "$(head -1 "$TMPD/p.heap")" "^heap_v2/"
	fi
	jm analyze "$TMPD/p.heap" --format collapsed
	expect_rc 0
	# 3.x ends each stack with the unwinder's 0: not a frame of its own.
	[[ $OUT != 0x0\;* && $OUT != *$'\n'0x0\;* ]] || fail "a 0x0 frame in: $OUT"
	jm analyze "$TMPD/p.heap"
	expect_rc 0; expect_match "$OUT" "Total:"
	# The version's own jeprof (pprof in 3.x) agrees on the total.
	bin=$VERSIONS_DIR/$v/inst/bin/jeprof
	[[ -x $bin ]] || bin=$VERSIONS_DIR/$v/inst/bin/pprof
	if [[ -x $bin ]]; then
		local want got
		want=$("$bin" --text --inuse_space "$VERSIONS_DIR/$v/jemfix" "$TMPD/p.heap" 2>/dev/null |
			awk '/^Total:/ { print $2; exit }')
		got=$(awk '/^Total:/ { print $2; exit }' <<<"$OUT")
		[[ -n $want ]] || fail "$bin printed no total"
		expect_eq "${got%% *}" "$want"
	fi
	jm "$pid" prof reset
	if ((n < 40000)); then
		expect_rc 4; expect_match "$ERR" "added in 4.0"
	else
		expect_rc 0
	fi
	jm "$pid" prof off
	expect_rc 0
}

# prof track: a site's growth over snapshots, and the saved track read back.
v_track() {
	local v=$1 pid jpid rc=0 active=false
	[[ $v == 5.2.* ]] && active=true	# upstream 1605/2231, as in v_prof
	start "$v" pid "prof:true,prof_active:$active,prof_accum:true,lg_prof_sample:10"
	start_bg jpid "$JEMATTACH" "$pid" prof track -i 0.3 -n 4 --format jsonl -o "$TMPD/t.jsonl" \
		2>"$TMPD/t.err"
	sleep 0.5
	fix "$pid" "alloc 3000 2048" >/dev/null
	wait "$jpid" || rc=$?
	expect_eq "$rc" 0
	expect_eq "$(jq -s length "$TMPD/t.jsonl")" 4
	jq -se '[.[3].sites[] | select(.live_bytes > 1000000)] | length > 0' "$TMPD/t.jsonl" \
		>/dev/null || fail "no site holds the 6 MB allocated: $(cat "$TMPD/t.err")"
	jm report sites "$TMPD/t.jsonl"
	expect_rc 0; expect_match "$OUT" "sites by growth: 4 snapshots"
	jm "$pid" get prof.active
	expect_eq "$OUT" "$active"
}

# The gdb command library on the version: the same values as the program's own.
v_gdb() {
	local v=$1 pid out pre=""
	need_gdb_calls
	start "$v" pid
	[[ $v == *-je_ ]] && pre="-ex 'jem-prefix je_'"
	out=$(eval gdb -p "$pid" -batch -nx -iex "'set debuginfod enabled off'" \
		-x gdb/jemalloc.gdb $pre -ex "'jem-get version'" -ex "'jem-get stats.allocated'" \
		-ex "'jem-stats -'" 2>"$TMPD/gerr" </dev/null | grep -v '^\[')
	expect_match "$out" "$(fix "$pid" "get s version")"
	expect_match "$out" "Begin jemalloc statistics"
	within "$(grep -xm1 '[0-9]\+' <<<"$out")" "$(fix "$pid" "get z stats.allocated")" 65536
	expect_eq "$(fix "$pid" ping)" pong
}

# An unmodified program with the version's library preloaded.
v_preload() {
	local v=$1 pid lib
	lib=$(ls "$VERSIONS_DIR/$v"/inst/lib/libjemalloc.so.[0-9] | head -1)
	start_bg pid env LD_PRELOAD="$lib" sleep 300
	wait_exe "$pid" sleep
	settle "$pid"
	jm "$pid" get version stats.allocated
	expect_rc 0
	if [[ $v == dev-* ]]; then expect_match "$OUT" "version 5.3.1-"; else expect_match "$OUT" "version ${v%%-*}-"; fi
	jm "$pid" info
	expect_rc 0
}

# chunk_check TAG PAGE: the census's $TMPD/TAG.blocks against the fixture's
# lists ($TMPD/live, $TMPD/freed): "MISSING SIZE_DIFFERS FREED_LISTED".  With
# PAGE (4.x) a block of 16 KiB or more is compared by its page: 4.x does not
# record where in its run's first page a large block starts (the census says
# so), and a freed block at that page is another's (a run reused).  A freed
# address taken since by a block of another size (any allocation may take it:
# libc's, jemalloc's own, a call made in the target; 2 runs of 48 of 4.5.0's
# tcache:false had a 320-byte block where the fixture had freed a smaller
# one), or by jemalloc for itself (prof's tables: with --by type,
# such blocks are labelled), is not the program's block listed live.
chunk_check() {
	awk -v page="$2" '
		function key(a, s) { return page && s >= 16384 ? substr(a, 1, length(a) - 3) : a }
		FILENAME == ARGV[1] { live[key($1, $2)] = $2; next }
		FILENAME == ARGV[2] { freed[$1] = $2; next }
		{ k = key($1, $2) }
		k in live { seen[k] = 1; if (live[k] != $2) bad++; next }
		freed[$1] == $2 && !/\(jemalloc/ { listed++ }
		END { for (k in live) if (!(k in seen)) miss++; print miss + 0, bad + 0, listed + 0 }
	' "$TMPD/live" "$TMPD/freed" "$TMPD/$1.blocks"
}

# The census of 3.x/4.x (chunks, runs, huge allocations; src/census/chunks.c):
# every block the fixture holds found with its usable size, none it freed
# listed live, live + thread-cached = stats.allocated, the same from a gcore
# core; --leaks leaves only the chain the fixture dropped and jemalloc's own
# blocks unanchored; --by root names the fixture's array.  4.x's ctl takes
# its statistics arrays from arena 0 at the first mallctl (73 600 bytes
# with 8 arenas): one is made before the census, so that the stats.allocated
# read after it is of the same heap.
v_census() {
	local v=$1 conf=${2:-} dir=$VERSIONS_DIR/$1 pid n page=0 layout json alloc
	[[ -x $dir/censusfix ]] || skip "jemalloc $v not built (make versions JE_BUILD=$v; make check-versions builds it)"
	start_fixture pid "$dir/censusfix" ${conf:+MALLOC_CONF=$conf}
	jm "$pid" get version
	expect_rc 0
	n=$(ver_num "$OUT")
	((n < 40000)) || page=1
	layout=$( ((n >= 40000)) && echo 4.5 || { [[ $v == *-noprof ]] && echo 3.6 || echo 3.6+prof; })
	for c in "alloc 6000" "threads 3" "hold 2 5000000" "hold 3 40000" "leak 100"; do
		expect_eq "$(fix "$pid" "$c")" ok
	done
	((n < 40000)) || [[ $(fix "$pid" tcache) == ok* ]] || fail "tcache.create failed"
	expect_eq "$(fix "$pid" "list $TMPD/live")" ok
	expect_eq "$(fix "$pid" "freed $TMPD/freed")" ok
	jm "$pid" get stats.allocated
	expect_rc 0
	jm "$pid" census --json --no-stats --blocks "$TMPD/live.blocks"
	expect_rc 0
	json=$OUT
	expect_eq "$(jq -r .layout <<<"$json")" "$layout"
	# 3.6's scan found every chunk the arenas' statistics count.
	((n >= 40000)) || expect_match "$(jq -r .map_how <<<"$json")" "[1-9][0-9]* arena chunks, all the arenas count"
	expect_eq "$(chunk_check live "$page")" "0 0 0"
	jm "$pid" get stats.allocated
	alloc=$OUT
	expect_eq "$(jq '.bytes + .thread_cached.bytes' <<<"$json")" "$alloc"
	(($(jq .thread_cached.blocks <<<"$json") > 0)) || fail "no thread-cached block"
	# tcache.create's cache holds the fixture's 50 freed 64-byte blocks, and
	# what it took for them and did not hand out (a quarantine holds the 50).
	if ((n >= 40000)); then
		local want=50
		[[ -z $conf ]] || want=1
		(($(jq .explicit_cached.blocks <<<"$json") >= want)) ||
			fail "tcache.create's cache: $(jq -c .explicit_cached <<<"$json")"
	fi
	if [[ $conf == quarantine* ]]; then
		expect_match "$(jq -r .warning <<<"$json")" "[1-9][0-9]* of the thread-cached blocks .* in quarantine"
	fi
	# The same from a core.
	if command -v gcore >/dev/null; then
		gcore -o "$TMPD/c" "$pid" >/dev/null 2>&1 || fail "gcore $pid failed"
		jm core "$TMPD/c.$pid" census --json --no-stats --blocks "$TMPD/core.blocks"
		rm -f "$TMPD/c.$pid"
		expect_rc 0
		expect_eq "$(chunk_check core "$page")" "0 0 0"
		expect_eq "$(jq '.bytes + .thread_cached.bytes' <<<"$OUT")" "$alloc"
	fi
	# Unanchored: the dropped chain of 48-byte blocks; jemalloc's own (each
	# thread's tcache_t, 4.x's ctl arrays) its own class, never leaked; what
	# looked leaked checked again in a second stop (chunks.c says what is
	# still allocated).
	jm "$pid" census --leaks --json --no-stats --blocks "$TMPD/leaks.blocks"
	expect_rc 0
	expect_eq "$(awk '/\[(leaked|unreferenced)\]/ && !/\(jemalloc/ { n++; if ($2 != 48) bad++ }
		END { print (n > 0), bad + 0 }' "$TMPD/leaks.blocks")" "1 0"
	(($(grep -c ' \[jemalloc\]$' "$TMPD/leaks.blocks") >= 3)) ||
		fail "jemalloc's own blocks: $(jq -c .jemalloc_own <<<"$OUT")"
	expect_eq "$(jq '.jemalloc_own.blocks' <<<"$OUT")" "$(grep -c ' \[jemalloc\]$' "$TMPD/leaks.blocks")"
	(($(jq .reads.confirmed <<<"$OUT") > 0)) || fail "not checked again: $(jq -c .reads <<<"$OUT")"
	jm "$pid" census --by root --json --no-stats
	expect_rc 0
	jq -e '[.roots[] | select(.root == "live (censusfix)") | .bytes][0] * 2 > .bytes' <<<"$OUT" \
		>/dev/null || fail "the fixture's array retains little: $(jq -c '.roots[:3]' <<<"$OUT")"
}

# The census over time on the chunk era, through the list of blocks a
# census keeps (blocks.c) and their owners: --save --addresses, then --base
# names the blocks born since -- exactly the fixture's new ones (a 4.x large
# block at its run's page in both censuses, as chunk_check keys it), none of
# those it still holds from before -- and whom they belong to (the fixture's
# array).  --format pprof of the same census carries the owners.
v_census_grow() {
	local v=$1 dir=$VERSIONS_DIR/$1 pid n page=0 json
	[[ -x $dir/censusfix ]] || skip "jemalloc $v not built"
	start_fixture pid "$dir/censusfix"
	jm "$pid" get version
	n=$(ver_num "$OUT")
	((n < 40000)) || page=1
	for c in "alloc 3000" "hold 3 40000"; do
		expect_eq "$(fix "$pid" "$c")" ok
	done
	expect_eq "$(fix "$pid" "list $TMPD/base")" ok
	jm "$pid" census --by root --save "$TMPD/base.snap" --addresses --no-stats
	expect_rc 0
	for c in "alloc 1500" "hold 20 40000" "hold 2 5000000"; do
		expect_eq "$(fix "$pid" "$c")" ok
	done
	expect_eq "$(fix "$pid" "list $TMPD/now")" ok
	jm "$pid" census --base "$TMPD/base.snap" --born "$TMPD/born" --json
	expect_rc 0
	json=$OUT
	# Added: the fixture's blocks now that were not then (by key); missing
	# from the born list, listed with another size, and born though held
	# since the base.
	expect_eq "$(awk -v page="$page" '
		function key(a, s) { return page && s >= 16384 ? substr(a, 1, length(a) - 3) : a }
		FILENAME == ARGV[1] { base[key($1, $2)] = 1; next }
		FILENAME == ARGV[2] { k = key($1, $2); if (!(k in base)) added[k] = $2; next }
		{ k = key($1, $2) }
		k in added { seen[k] = 1; if (added[k] != $2) bad++; next }
		k in base { old++ }
		END { for (k in added) { n++; if (!(k in seen)) miss++ }
			print (n > 1000), miss + 0, bad + 0, old + 0 }
	' "$TMPD/base" "$TMPD/now" "$TMPD/born")" "1 0 0 0"
	# Whom the 20 new large blocks belong to: the fixture's array of them.
	expect_eq "$(awk -F'\t' '$1 ~ / 40960$/ && $2 ~ /^live \(censusfix\)/' "$TMPD/born" | wc -l)" 20
	expect_match "$(jq -r '.born_owners[0].owner' <<<"$json")" "^live \(censusfix\)"
	jm "$pid" census --by root --format pprof -o "$TMPD/now.pb.gz" --no-stats
	expect_rc 0
	zcat "$TMPD/now.pb.gz" | grep -aq "live (censusfix)" || fail "the profile names no owner"
}

# The census under settings that move what the walk meets: one arena and no
# thread caches, other chunk sizes (read from the library), junk and redzones
# (regions spaced out, arena_bin_info says how; 64 KiB chunks, whose 3.6
# header is one page with prof or without), 4.x's dss:primary (chunks in
# the brk heap).  With prof, a sampled small block gets a run of its own
# (3.6: unless samples are a page apart or closer, then its run keeps a
# context array), which stats.allocated counts whole: the note gives that
# difference, and it is the whole difference (samples every 16 KiB on
# average: some small blocks are sure to be).
v_census_settings() {
	local v=$1 dir=$VERSIONS_DIR/$1 pid n conf json sum page=0 extra
	[[ -x $dir/censusfix ]] || skip "jemalloc $v not built"
	local confs=(tcache:false,narenas:1 lg_chunk:16 lg_chunk:22 lg_chunk:24 junk:true redzone:true)
	[[ $v == *-noprof ]] || confs+=(prof:true,lg_prof_sample:14 prof:true,lg_prof_sample:12)
	[[ $v == 3.* ]] || confs+=(dss:primary)
	for conf in "${confs[@]}"; do
		start_fixture pid "$dir/censusfix" MALLOC_CONF=$conf
		jm "$pid" get version
		n=$(ver_num "$OUT")
		((n < 40000)) || page=1
		for c in "alloc 3000" "threads 2" "hold 1 5000000"; do
			expect_eq "$(fix "$pid" "$c")" ok
		done
		expect_eq "$(fix "$pid" "list $TMPD/live")" ok
		expect_eq "$(fix "$pid" "freed $TMPD/freed")" ok
		jm "$pid" get stats.allocated
		jm "$pid" census --json --no-stats --by type --blocks "$TMPD/conf.blocks"
		expect_rc 0
		json=$OUT
		sum=$(jq '.bytes + .thread_cached.bytes' <<<"$json")
		jm "$pid" get stats.allocated
		extra=$(jq -r .warning <<<"$json" | sed -n 's/.*counts whole: \([0-9]*\) bytes more.*/\1/p')
		extra=${extra:-0}
		[[ $conf != *sample:14 ]] || ((extra > 0)) ||
			fail "$conf: no prof sample noted: $(jq -r .warning <<<"$json")"
		expect_eq "$((sum + extra))" "$OUT"
		# 4.x lists a sampled block at its run's page too: by size only then.
		((extra && page)) || expect_eq "$(chunk_check conf "$page")" "0 0 0"
		kill "$pid"
	done
}

# census_exact_in DIR LIBDIR: the census of DIR's fixture with LIBDIR's copy
# of the library (LD_LIBRARY_PATH wins over its RUNPATH), exact; its JSON in $OUT.
census_exact_in() {
	local pid json
	start_fixture pid "$1/censusfix" LD_LIBRARY_PATH="$2"
	grep -q "$2/" "/proc/$pid/maps" || fail "the copy in $2 is not loaded"
	expect_eq "$(fix "$pid" "alloc 3000")" ok
	expect_eq "$(fix "$pid" "threads 2")" ok
	jm "$pid" get stats.allocated
	jm "$pid" census --json --no-stats
	expect_rc 0
	json=$OUT
	(($(jq .thread_cached.blocks <<<"$json") > 0)) || fail "no thread-cached block"
	jm "$pid" get stats.allocated
	expect_eq "$(jq '.bytes + .thread_cached.bytes' <<<"$json")" "$OUT"
	OUT=$json
}

# A stripped copy of the library: 4.5's rtree is found by its shape in the
# library's data, the rest derived (bins, map_bias, the TLS block is tsd);
# 3.6 is refused, naming what is missing.  With its debuginfo beside it (a
# .gnu_debuglink, as distributions' -dbg packages give it) by symbol again.
v_census_stripped() {
	local v=$1 dir=$VERSIONS_DIR/$1 lib name pid
	[[ -x $dir/censusfix ]] || skip "jemalloc $v not built"
	lib=$(ls "$dir"/inst/lib/libjemalloc.so.[0-9] | head -1)
	name=${lib##*/}
	mkdir -p "$TMPD/strip" "$TMPD/dbg"
	strip -o "$TMPD/strip/$name" "$lib"
	if [[ $v == 4.* ]]; then
		census_exact_in "$dir" "$TMPD/strip"
		expect_match "$(jq -r .map_how <<<"$OUT")" "found in jemalloc's data \(no symbols\)"
	else
		start_fixture pid "$dir/censusfix" LD_LIBRARY_PATH="$TMPD/strip"
		grep -q "$TMPD/strip/$name" "/proc/$pid/maps" || fail "the stripped copy is not loaded"
		jm "$pid" census
		expect_rc 4
		expect_match "$ERR" "census: jemalloc ${v%%-*}-.* needs its symbols \(.*\): this library has none; install its debuginfo"
	fi
	objcopy --only-keep-debug "$lib" "$TMPD/dbg/$name.debug"
	strip -o "$TMPD/dbg/$name" "$lib"
	(cd "$TMPD/dbg" && objcopy --add-gnu-debuglink="$name.debug" "$name")
	census_exact_in "$dir" "$TMPD/dbg"
	expect_match "$(jq -r .map_how <<<"$OUT")" "symbol"
}

for v in $JE_VERSIONS; do
	id=${v//[.-]/_}
	# No source for it here (scripts/build-jemalloc.sh wrote why): skipped, not passed.
	if [[ -f $VERSIONS_DIR/$v/unavailable ]]; then
		eval "t_${id}() { skip \"jemalloc $v source not available: \$(cat '$VERSIONS_DIR/$v/unavailable')\"; }"
		continue
	fi
	[[ -x $VERSIONS_DIR/$v/jemfix ]] || { echo "FAILED 80-versions/$v: not built (make versions)"; T_FAIL=$((T_FAIL + 1)); continue; }
	for aspect in get stats purge_decay_watch prof gdb track; do
		eval "t_${id}_$aspect() { v_$aspect $v; }"
	done
	[[ $v == *-je_ ]] || eval "t_${id}_preload() { v_preload $v; }"
	# The census of the chunk era, and of 3.6's other layout and TLS model.
	if [[ $v == [34].* ]]; then
		eval "t_${id}_census() { v_census $v; }"
		eval "t_${id}_census_quarantine() { v_census $v quarantine:262144; }"
		eval "t_${id}_census_stripped() { v_census_stripped $v; }"
		eval "t_${id}_census_settings() { v_census_settings $v; }"
		eval "t_${id}_census_grow() { v_census_grow $v; }"
		if [[ $v == 3.* ]]; then
			eval "t_${id}_census_ie_noprof() { v_census $v-ie-noprof; }"
			eval "t_${id}_census_ie_noprof_grow() { v_census_grow $v-ie-noprof; }"
			eval "t_${id}_census_ie_noprof_settings() { v_census_settings $v-ie-noprof; }"
		fi
	fi
done
run_tests
