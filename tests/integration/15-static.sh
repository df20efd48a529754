#!/bin/bash
# 15-static.sh -- jemalloc linked statically, with and without a symbol prefix,
# and stripped.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

check_static() {
	local bin=$1 prefix=$2 pid
	start_fixture pid "$FIXTURES/$bin"
	jm "$pid" info
	expect_rc 0
	expect_match "$OUT" "module +.*/$bin \(static, $( [[ -n $prefix ]] && echo "prefix $prefix" || echo "no prefix")\)"
	jm "$pid" get stats.allocated version
	expect_rc 0
	expect_eq "$(sed -n 1p <<<"$OUT")" "stats.allocated $(fix "$pid" "get z stats.allocated")"
	expect_eq "$(fix "$pid" ping)" pong
}

t_static_no_prefix() { check_static jemfix-static ""; }
t_static_je_prefix() { check_static jemfix-static-je je_; }
t_static_rjem_prefix() { check_static jemfix-static-rjem _rjem_; }

t_stripped_with_separate_debuginfo() { check_static jemfix-static-debuglink ""; }

t_static_inside_a_shared_object() {
	local pid
	start_fixture pid "$FIXTURES/jemfix-in-so"
	jm "$pid" info
	expect_rc 0
	expect_match "$OUT" "module +.*/libjemfix-rjem\.so \(static, prefix _rjem_\)"
	jm "$pid" get stats.allocated
	expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
}

t_prefix_option_overrides_detection() {
	local pid
	start_fixture pid "$FIXTURES/jemfix-static-je"
	jm --prefix je_ "$pid" get version
	expect_rc 0
	jm --prefix _rjem_ "$pid" get version
	expect_rc 4
	expect_match "$ERR" 'no jemalloc with symbol prefix "_rjem_"'
}

t_stripped_static_is_exit_4() {
	local pid
	start_fixture pid "$FIXTURES/jemfix-static-stripped"
	jm "$pid" get version
	expect_rc 4
	expect_match "$ERR" "statically linked into .*jemfix-static-stripped but its symbols are stripped"
	expect_eq "$(fix "$pid" ping)" pong
}

t_two_copies_need_module() {
	local pid
	# A static je_ copy plus Debian's shared one, preloaded.
	start_fixture pid "$FIXTURES/jemfix-static-je" LD_PRELOAD=libjemalloc.so.2
	jm "$pid" get version
	expect_rc 2
	expect_match "$ERR" "2 copies of jemalloc: .* \(choose one with --module PATH\)$"
	jm --module libjemalloc.so.2 "$pid" get stats.allocated
	expect_rc 0
	jm --module "$(readlink -f "$FIXTURES/jemfix-static-je")" "$pid" get stats.allocated
	expect_rc 0
	expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
}

t_deleted_binary_is_read_through_map_files() {
	local pid
	cp "$FIXTURES/jemfix-static-je" "$TMPD/doomed"
	start_fixture pid "$TMPD/doomed"
	rm "$TMPD/doomed"
	jm "$pid" get stats.allocated
	expect_rc 0
	expect_eq "$OUT" "$(fix "$pid" "get z stats.allocated")"
}

run_tests
