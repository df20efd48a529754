#!/bin/bash
# 60-analyze.sh -- `jemattach analyze` on real dumps of the heapsites fixture:
# the right site with the right bytes, jeprof's totals, every format, --base,
# bad input, a deleted binary through --pid, separate debuginfo by build-id.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

CONF=MALLOC_CONF=prof:true,lg_prof_sample:12
SRC=tests/fixtures/heapsites.c

# dump PID FILE: the fixture writes its own profile (no jemattach involved).
dump() { [[ $(fix "$1" "dump $2") == ok ]] || fail "fixture could not dump $2"; }

# held PID SITE: the bytes the fixture says SITE holds.
held() { fix "$1" held | awk -v s="$2" '{ for (i = 1; i < NF; i++) if ($i == s) print $(i + 1) }'; }

# mb_to_bytes X: "64.0" (jeprof's MiB with one decimal) -> bytes.
mb_to_bytes() { awk -v m="$1" 'BEGIN { printf "%d", m * 1048576 }'; }

# jsonsite FILE NAME FIELD: a field of the site called NAME in a JSON report.
jsonsite() { jq -r --arg n "$2" ".sites[] | select(.name == \$n) | .$3" <<<"$1"; }

t_top_site_is_the_right_function() {
	local pid big small
	start_fixture pid "$FIXTURES/heapsites" "$CONF"
	fix "$pid" "big 64" >/dev/null; fix "$pid" "small 8" >/dev/null
	big=$(held "$pid" big); small=$(held "$pid" small)
	dump "$pid" "$TMPD/a.heap"
	jm analyze "$TMPD/a.heap" --format json
	expect_rc 0
	expect_eq "$(jq -r '.sites[0].name' <<<"$OUT")" keep_big
	within "$(jsonsite "$OUT" keep_big flat)" "$big" $((big / 10))
	# small_block() is inlined into keep_small(): a frame of its own, keep_small above it.
	within "$(jsonsite "$OUT" small_block flat)" "$small" $((small / 10))
	expect_eq "$(jsonsite "$OUT" keep_small cum)" "$(jsonsite "$OUT" small_block flat)"
	jm analyze "$TMPD/a.heap" --top 1
	expect_match "$OUT" $'^Total: [0-9.]+ MB\n +[0-9.]+ +[0-9.]+% +[0-9.]+% +[0-9.]+ +[0-9.]+% keep_big$'
}

t_totals_agree_with_jeprof() {
	local pid want got kind
	command -v jeprof >/dev/null || fail "jeprof (libjemalloc-dev) is not installed"
	start_fixture pid "$FIXTURES/heapsites" "$CONF"
	fix "$pid" "big 48" >/dev/null; fix "$pid" "small 16" >/dev/null
	dump "$pid" "$TMPD/j.heap"
	for kind in inuse_space inuse_objects; do
		want=$(jeprof --text "--$kind" "$FIXTURES/heapsites" "$TMPD/j.heap" 2>/dev/null |
			awk '/^Total:/ { print $2; exit }')
		[[ -n $want ]] || fail "jeprof printed no total"
		jm analyze "$TMPD/j.heap" "--${kind/_/-}"
		expect_rc 0
		got=$(awk '/^Total:/ { print $2; exit }' <<<"$OUT")
		if [[ $kind == inuse_space ]]; then
			want=$(mb_to_bytes "$want"); got=$(mb_to_bytes "$got")
		fi
		within "$got" "$want" $((want / 100 + 1))
	done
}

t_formats_collapsed_and_pprof() {
	local pid raw
	command -v protoc >/dev/null || fail "protoc (protobuf-compiler) is not installed"
	start_fixture pid "$FIXTURES/heapsites" "$CONF"
	fix "$pid" "big 16" >/dev/null; fix "$pid" "small 4" >/dev/null
	dump "$pid" "$TMPD/f.heap"
	jm analyze "$TMPD/f.heap" --format collapsed
	expect_rc 0
	expect_match "$OUT" $'(^|\n)[^ ]*;main;keep_big [0-9]+(\n|$)'
	expect_match "$OUT" $'(^|\n)[^ ]*;main;keep_small;small_block [0-9]+(\n|$)'
	jm analyze "$TMPD/f.heap" --format pprof -o "$TMPD/f.pb.gz"
	expect_rc 0
	raw=$(gzip -dc "$TMPD/f.pb.gz" | protoc --decode_raw) || fail "protoc cannot decode the output"
	expect_match "$raw" '"keep_big"'
	expect_match "$raw" '"small_block"'
	expect_match "$raw" '"inuse_space"'
}

t_base_shows_only_growth() {
	local pid b0 b1
	start_fixture pid "$FIXTURES/heapsites" "$CONF"
	fix "$pid" "big 32" >/dev/null; fix "$pid" "small 8" >/dev/null
	b0=$(held "$pid" big)
	dump "$pid" "$TMPD/base.heap"
	fix "$pid" "big 16" >/dev/null
	b1=$(held "$pid" big)
	dump "$pid" "$TMPD/now.heap"
	jm analyze "$TMPD/now.heap" --base "$TMPD/base.heap" --format json
	expect_rc 0
	expect_eq "$(jq -r '.sites[0].name' <<<"$OUT")" keep_big
	within "$(jsonsite "$OUT" keep_big flat)" $((b1 - b0)) $(((b1 - b0) / 10))
	expect_eq "$(jsonsite "$OUT" small_block flat)" ""
	expect_eq "$(jq -r .diff <<<"$OUT")" true
}

t_bad_input_exit_2_with_line() {
	printf 'heap_v2/524288\n@ 0x10 0x20\n' >"$TMPD/trunc.heap"
	jm analyze "$TMPD/trunc.heap"
	expect_rc 2
	expect_match "$ERR" 'trunc.heap:2: .*truncated'
	printf 'heap_v2/524288\n@ 0x10\n  t*: 1: x [0: 0]\n' >"$TMPD/bad.heap"
	jm analyze "$TMPD/bad.heap"
	expect_rc 2
	expect_match "$ERR" 'bad.heap:3: bad counts'
	head -c 4096 /bin/ls >"$TMPD/elf.heap"
	jm analyze "$TMPD/elf.heap"
	expect_rc 2
	expect_match "$ERR" 'elf.heap:1: not a jemalloc heap profile'
	jm analyze "$TMPD/missing.heap"
	expect_rc 2
	expect_match "$ERR" 'No such file'
	jm analyze "$TMPD/bad.heap" --format svg
	expect_rc 2
	expect_match "$(head -1 <<<"$ERR")" '^jemattach: unknown --format "svg"$'
	expect_match "$ERR" 'usage: jemattach analyze PROFILE'
}

t_deleted_binary_through_pid() {
	local pid
	mkdir "$TMPD/bin"
	cp "$FIXTURES/heapsites" "$TMPD/bin/heapsites"
	start_fixture pid "$TMPD/bin/heapsites" "$CONF"
	fix "$pid" "big 8" >/dev/null
	dump "$pid" "$TMPD/d.heap"
	rm "$TMPD/bin/heapsites"
	jm analyze "$TMPD/d.heap" --top 3
	expect_rc 0
	[[ $OUT != *keep_big* ]] || fail "named keep_big without the binary"
	expect_match "$ERR" 'cannot read .*heapsites'
	jm analyze "$TMPD/d.heap" --pid "$pid" --top 3
	expect_rc 0
	expect_match "$OUT" $'\n.* keep_big(\n|$)'
	jm analyze "$TMPD/d.heap" --pid 999999999
	expect_rc 3
}

t_separate_debuginfo_by_build_id() {
	local pid id line
	mkdir -p "$TMPD/strip" "$TMPD/dbg"
	id=$(readelf -n "$FIXTURES/heapsites" | awk '/Build ID/ { print $3 }')
	[[ -n $id ]] || fail "the fixture has no build-id"
	mkdir -p "$TMPD/dbg/.build-id/${id:0:2}"
	objcopy --only-keep-debug "$FIXTURES/heapsites" "$TMPD/dbg/.build-id/${id:0:2}/${id:2}.debug"
	strip --strip-all -o "$TMPD/strip/heapsites" "$FIXTURES/heapsites"
	start_fixture pid "$TMPD/strip/heapsites" "$CONF"
	fix "$pid" "big 8" >/dev/null
	dump "$pid" "$TMPD/s.heap"
	jm analyze "$TMPD/s.heap" --top 3
	[[ $OUT != *keep_big* ]] || fail "named keep_big from a stripped binary"
	# The separate file's symbol table names functions without --lines too.
	jm analyze "$TMPD/s.heap" --debuginfo-path "$TMPD/dbg" --top 3 --format json
	expect_rc 0
	expect_eq "$(jsonsite "$OUT" keep_big named)" symbol
	line=$(grep -n 'big.blocks\[big.n++\] = JE(malloc)' "$SRC" | cut -d: -f1)
	jm analyze "$TMPD/s.heap" --debuginfo-path "$TMPD/dbg" --lines --top 3
	expect_rc 0
	expect_match "$OUT" "keep_big heapsites.c:$line"
}

# nm_addr FILE FUNC: FUNC's address in FILE as fn_0x names it (hex, no leading zeros).
nm_addr() { nm "$1" | awk -v f="$2" '$3 == f { sub(/^0+/, "", $1); print $1 }'; }

# A binary stripped of every symbol still has .eh_frame: each function is one
# site named by its start, none is an address, and the hint names the build-id.
t_stripped_named_by_function_boundary() {
	local pid big small id addr
	mkdir "$TMPD/eh"
	strip --strip-all -o "$TMPD/eh/heapsites" "$FIXTURES/heapsites"
	[[ $(readelf -S "$TMPD/eh/heapsites") != *.symtab* ]] || fail "strip left a .symtab"
	id=$(readelf -n "$FIXTURES/heapsites" | awk '/Build ID/ { print $3 }')
	start_fixture pid "$TMPD/eh/heapsites" "$CONF"
	fix "$pid" "big 16" >/dev/null; fix "$pid" "small 8" >/dev/null
	big=$(held "$pid" big); small=$(held "$pid" small)
	dump "$pid" "$TMPD/eh.heap"
	jm analyze "$TMPD/eh.heap" --format json --top 0
	expect_rc 0
	addr=$(nm_addr "$FIXTURES/heapsites" keep_big)
	within "$(jsonsite "$OUT" "heapsites!fn_0x$addr" flat)" "$big" $((big / 10))
	expect_eq "$(jsonsite "$OUT" "heapsites!fn_0x$addr" named)" boundary
	# small_block() is inlined: its bytes are keep_small's, one function.
	addr=$(nm_addr "$FIXTURES/heapsites" keep_small)
	within "$(jsonsite "$OUT" "heapsites!fn_0x$addr" flat)" "$small" $((small / 10))
	# No flat byte sits on a bare address: 0% unnamed by function boundary.
	expect_eq "$(jq '[.sites[] | select(.named == "address") | .flat] | add // 0' <<<"$OUT")" 0
	expect_eq "$(jq '.unnamed >= .total * 0.9' <<<"$OUT")" true
	expect_match "$ERR" "% of the bytes .* sit in functions without a name"
	expect_match "$ERR" "heapsites \(build-id $id\)"
	expect_match "$ERR" "debuginfod-find debuginfo BUILD-ID"
	# The same names and hint where the dump is taken and analysed live.
	jm "$pid" prof dump -o "$TMPD/eh2.heap" --analyze --top 3
	expect_rc 0
	expect_match "$OUT" $'\n.* heapsites!fn_0x'"$(nm_addr "$FIXTURES/heapsites" keep_big)"$'\n'
	expect_match "$ERR" "heapsites \\(build-id $id\\)"
}

# MiniDebugInfo as Fedora builds it: the function symbols .dynsym lacks, xz'd
# into .gnu_debugdata of a stripped binary; libdwfl reads it.
# A difference whose growth and shrinkage cancel out totals 0: shares of it
# are "-", not nan or inf.
t_base_with_zero_total_difference() {
	local v
	for v in 1000:2000 3000:4000; do
		printf 'heap_v2/524288\n  t*: 1: 1048576 [0: 0]\n@ 0x%s 0x%s\n  t*: 1: 1048576 [0: 0]\n\nMAPPED_LIBRARIES:\n' \
			"${v%:*}" "${v#*:}" >"$TMPD/${v%:*}.heap"
	done
	jm analyze "$TMPD/3000.heap" --base "$TMPD/1000.heap"
	expect_rc 0
	expect_match "$OUT" "^Total: 0.0 MB"
	[[ $OUT != *nan* && $OUT != *inf* ]] || fail "nan or inf in: $OUT"
	expect_match "$OUT" " 1.2 +- +- +1.2 +- 0x3000"
}

t_minidebuginfo_names() {
	local pid big b=$TMPD/mini/heapsites
	mkdir "$TMPD/mini"
	nm -D "$FIXTURES/heapsites" --format=posix --defined-only | awk '{ print $1 }' | sort >"$b.dyn"
	nm "$FIXTURES/heapsites" --format=posix --defined-only |
		awk '$2 == "T" || $2 == "t" { print $1 }' | sort >"$b.funcs"
	comm -13 "$b.dyn" "$b.funcs" >"$b.keep"
	objcopy --only-keep-debug "$FIXTURES/heapsites" "$b.debug"
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols="$b.keep" "$b.debug" "$b.mini"
	xz "$b.mini"
	strip --strip-all -R .comment -o "$b" "$FIXTURES/heapsites"
	objcopy --add-section .gnu_debugdata="$b.mini.xz" "$b"
	rm "$b.debug"
	[[ $(readelf -S "$b") == *.gnu_debugdata* && $(readelf -S "$b") != *.symtab* ]] ||
		fail "the fixture has no .gnu_debugdata"
	start_fixture pid "$b" "$CONF"
	fix "$pid" "big 8" >/dev/null
	big=$(held "$pid" big)
	dump "$pid" "$TMPD/mini.heap"
	jm analyze "$TMPD/mini.heap" --format json --top 0
	expect_rc 0
	within "$(jsonsite "$OUT" keep_big flat)" "$big" $((big / 10))
	expect_eq "$(jsonsite "$OUT" keep_big named)" symbol
}

# The network only when asked, whatever $DEBUGINFOD_URLS says (the library's
# policy, not the CLI's environment): the loader tells whether libdw loaded
# its debuginfod client at all.
t_debuginfod_only_when_asked() {
	local pid
	start_fixture pid "$FIXTURES/heapsites" "$CONF"
	fix "$pid" "big 4" >/dev/null
	dump "$pid" "$TMPD/n.heap"
	jm_run env DEBUGINFOD_URLS=http://127.0.0.1:9 LD_DEBUG=libs "$JEMATTACH" analyze "$TMPD/n.heap" --debuginfod
	expect_rc 0
	[[ $ERR == *libdebuginfod.so* ]] || skip "libdw did not load a debuginfod client here"
	for args in "" "--pid $pid"; do
		# shellcheck disable=SC2086
		jm_run env DEBUGINFOD_URLS=http://127.0.0.1:9 LD_DEBUG=libs "$JEMATTACH" analyze "$TMPD/n.heap" $args
		expect_rc 0
		expect_match "$OUT" keep_big
		[[ $ERR != *libdebuginfod.so* ]] || fail "analyze $args loaded the debuginfod client"
	done
}

t_list_folds() {
	jm analyze --list-folds
	expect_rc 0
	expect_match "$OUT" 'always: je_\* .*malloc.*posix_memalign.*__rust_alloc'
	expect_match "$OUT" 'Redis: .*ztry.*malloc'
	expect_match "$OUT" 'BIND \(ISC\): .*isc_'
}

run_tests
