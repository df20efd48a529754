#!/bin/bash
# 61-names.sh -- names as users read them, on the C++ fixture cxxsites:
# demangled in analyze (text, JSON with both forms, collapsed, pprof read by
# `go tool pprof`), threads and prof track, mangled with --no-demangle; the
# default folds of ATS's and BIND's allocator wrappers.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

CONF=MALLOC_CONF=prof:true,lg_prof_sample:12
REALLOC='Allocator<false>::realloc(void*, unsigned long, unsigned long, unsigned long)'
ADD='shop::Order::add(int)'
MiB=1048576

# mb_to_bytes X: "8.0" (MiB, one decimal) -> bytes.
mb_to_bytes() { awk -v m="$1" 'BEGIN { printf "%d", m * 1048576 }'; }

# textsite TEXT NAME: the flat MB of the row whose name is exactly NAME.
textsite() {
	awk -v n="$2" '{ s = $0; sub(/^ *[-0-9.]+ +[-0-9.]+% +[-0-9.]+% +[-0-9.]+ +[-0-9.]+% /, "", s);
		if (s == n) { print $1; exit } }' <<<"$1"
}

# cxx_dump VAR CMD: a cxxsites fixture given CMD, and its profile in $TMPD/c.heap.
cxx_dump() {
	start_fixture "$1" "$FIXTURES/cxxsites" "$CONF"
	[[ $(fix "${!1}" "$2") == ok ]] || fail "fixture did not run $2"
	jm "${!1}" prof dump -o "$TMPD/c.heap"
	expect_rc 0
}

t_analyze_demangles() {
	local pid
	cxx_dump pid "cpp 8"
	jm analyze "$TMPD/c.heap"
	expect_rc 0
	# Each site holds 8 MiB; the names are what c++filt prints.
	within "$(mb_to_bytes "$(textsite "$OUT" "$REALLOC")")" $((8 * MiB)) $((MiB))
	within "$(mb_to_bytes "$(textsite "$OUT" "$ADD")")" $((8 * MiB)) $((MiB))
	expect_eq "$(echo _ZN9AllocatorILb0EE7reallocEPvmmm | c++filt)" "$REALLOC"
	[[ $OUT != *_ZN* ]] || fail "a mangled name in the text report: $OUT"
	jm analyze "$TMPD/c.heap" --no-demangle
	within "$(mb_to_bytes "$(textsite "$OUT" _ZN9AllocatorILb0EE7reallocEPvmmm)")" $((8 * MiB)) $((MiB))
	within "$(mb_to_bytes "$(textsite "$OUT" _ZN4shop5Order3addEi)")" $((8 * MiB)) $((MiB))
	jm --no-demangle analyze "$TMPD/c.heap"
	expect_match "$OUT" $'\n[^\n]* _ZN4shop5Order3addEi\n'
}

t_analyze_json_collapsed_both_forms() {
	local pid
	cxx_dump pid "cpp 4"
	jm analyze "$TMPD/c.heap" --format json
	expect_rc 0
	expect_eq "$(jq -r --arg d "$ADD" '.sites[] | select(.demangled == $d) | .function' <<<"$OUT")" \
		_ZN4shop5Order3addEi
	expect_eq "$(jq -r '.sites[] | select(.function == "_ZN4shop5Order3addEi") | .name' <<<"$OUT")" \
		_ZN4shop5Order3addEi
	expect_eq "$(jq -r --arg d "$REALLOC" '[.stacks[].frames[] | select(.demangled == $d)][0].function' \
		<<<"$OUT")" _ZN9AllocatorILb0EE7reallocEPvmmm
	jm analyze "$TMPD/c.heap" --format collapsed
	expect_rc 0
	expect_match "$OUT" ";main;shop::Order::add\\(int\\) [0-9]+"
	# A user's regex may name the demangled form.
	jm analyze "$TMPD/c.heap" --focus '^shop::'
	expect_rc 0
	[[ -n $(textsite "$OUT" "$ADD") && -z $(textsite "$OUT" "$REALLOC") ]] ||
		fail "--focus '^shop::' kept the wrong sites: $OUT"
}

t_pprof_read_by_go() {
	local pid
	command -v go >/dev/null || skip "no go (golang-go) to run go tool pprof"
	cxx_dump pid "cpp 4"
	jm analyze "$TMPD/c.heap" --format pprof -o "$TMPD/c.pb.gz"
	expect_rc 0
	OUT=$(HOME=$TMPD GOCACHE=$TMPD/gocache go tool pprof -top "$TMPD/c.pb.gz" 2>&1) ||
		fail "go tool pprof failed: $OUT"
	expect_match "$OUT" "MB [0-9.]+% +[0-9.]+% +[0-9.]+MB +[0-9.]+% +shop::Order::add\\(int\\)"
	expect_match "$OUT" "Allocator<false>::realloc\\(void\\*, unsigned long"
	[[ $OUT != *_ZN4shop* ]] || fail "go tool pprof shows a mangled name: $OUT"
}

t_threads_demangle() {
	local pid
	start_fixture pid "$FIXTURES/cxxsites"
	jm "$pid" threads
	expect_rc 0
	expect_match "$OUT" $'TID [0-9]+ \\(worker\\)[^\n]*\n(#[^\n]*\n)*#[0-9 ]+0x[0-9a-f]+ shop::Worker::run\\(void\\*\\)\\+0x'
	jm "$pid" threads --no-demangle
	expect_match "$OUT" ' _ZN4shop6Worker3runEPv\+0x'
	jm --no-demangle "$pid" threads
	expect_match "$OUT" ' _ZN4shop6Worker3runEPv\+0x'
	jm "$pid" threads --json
	expect_eq "$(jq -r '[.[].frames[] | select(.func == "_ZN4shop6Worker3runEPv")][0].demangled' \
		<<<"$OUT")" 'shop::Worker::run(void*)'
}

t_track_demangles() {
	local pid
	start_fixture pid "$FIXTURES/cxxsites" "$CONF"
	[[ $(fix "$pid" "cpp 4") == ok ]] || fail "fixture did not allocate"
	jm --timeout 30 "$pid" prof track -n 1 --top 5 -o "$TMPD/t.jsonl" --format jsonl
	expect_rc 0
	expect_match "$OUT" "shop::Order::add\\(int\\) < main \\["
	jm report sites "$TMPD/t.jsonl"
	expect_rc 0
	expect_match "$OUT" "Allocator<false>::realloc\\(void\\*, unsigned long, unsigned long, unsigned long\\) < main"
	jm --timeout 30 "$pid" prof track -n 1 --no-demangle
	expect_rc 0
	expect_match "$OUT" "#0 _ZN4shop5Order3addEi \\(cxxsites.cc:[0-9]+\\)"
}

t_default_folds_ats_and_bind() {
	local pid
	cxx_dump pid "wrap 8"
	jm analyze "$TMPD/c.heap"
	expect_rc 0
	# The wrappers are folded: their callers hold the memory.
	within "$(mb_to_bytes "$(textsite "$OUT" serve_ats)")" $((8 * MiB)) $((MiB))
	within "$(mb_to_bytes "$(textsite "$OUT" serve_isc)")" $((8 * MiB)) $((MiB))
	expect_eq "$(textsite "$OUT" ats_malloc)$(textsite "$OUT" isc__mem_get)" ""
	# Without the rules they are the sites (what the issue saw on ATS and BIND).
	jm analyze "$TMPD/c.heap" --no-default-folds
	within "$(mb_to_bytes "$(textsite "$OUT" ats_malloc)")" $((8 * MiB)) $((MiB))
	within "$(mb_to_bytes "$(textsite "$OUT" isc__mem_get)")" $((8 * MiB)) $((MiB))
	jm analyze --list-folds
	expect_match "$OUT" 'Traffic Server: .*ats_\(malloc\|calloc\|realloc\|memalign.*ink_freelist_new'
	expect_match "$OUT" 'BIND \(ISC\): .*isc_\+mem_\(get\|allocate\|reallocate'
}

run_tests
