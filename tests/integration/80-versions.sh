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
done
run_tests
