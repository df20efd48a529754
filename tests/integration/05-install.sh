#!/bin/bash
# 05-install.sh -- make install honours PREFIX and DESTDIR, and what it installs works.
# runner: light (beside a long file: no clock in its assertions)
source tests/lib.sh

# installed: make install into $TMPD/root (DESTDIR) under /opt/jma (PREFIX), once.
installed() {
	[[ -e $TMPD/root/.done ]] && return 0
	make --no-print-directory -s install DESTDIR="$TMPD/root" PREFIX=/opt/jma >"$TMPD/install.log" 2>&1 ||
		fail "make install: $(tail -3 "$TMPD/install.log")"
	touch "$TMPD/root/.done"
}

t_install_into_destdir() {
	local root=$TMPD/root pid
	installed
	for f in bin/jemattach lib/libjemattach.a lib/libjemattach.so.0 lib/libjemattach.so \
		lib/pkgconfig/jemattach.pc include/jemattach.h include/jemattach/session.h \
		include/jemattach/heap.h include/jemattach/api.h include/jemattach/version.h \
		share/man/man1/jemattach.1 share/jemattach/jemalloc.gdb; do
		[[ -e $root/opt/jma/$f ]] || fail "missing $f"
	done
	expect_eq "$("$root/opt/jma/bin/jemattach" --gdb-script)" "$root/opt/jma/share/jemattach/jemalloc.gdb"
	start_fixture pid "$FIXTURES/jemfix"
	expect_eq "$("$root/opt/jma/bin/jemattach" "$pid" get opt.narenas)" "$(fix "$pid" "get u opt.narenas")"
}

# The installed tool runs the installed server module (its answer to a
# missing --web-config is the module's, read before it listens), which
# exports its entry point and nothing else.
t_installed_tool_runs_its_server_module() {
	local root=$TMPD/root
	installed
	jm_run "$root/opt/jma/bin/jemattach" serve --web-config "$TMPD/none.yml"
	expect_rc 2
	expect_match "$ERR" "^jemattach: --web-config: "
	expect_eq "$(nm -D --defined-only "$root/opt/jma/lib/jemattach/jemattach-serve.so" | awk '{ print $3 }')" \
		jemattach_serve_module
}

# The shared library shows the public API and nothing else: every function
# declared in include/ (between JMA_API_BEGIN and JMA_API_END), under the
# version node of src/libjemattach.map, and no internal symbol.
t_library_exports_only_its_api() {
	local so=build/libjemattach.so
	expect_eq "$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')" libjemattach.so.0
	nm -D --defined-only --without-symbol-versions "$so" | awk '$2 != "A" { print $3 }' | sort >"$TMPD/exported"
	[[ -s $TMPD/exported ]] || fail "nothing exported"
	grep -v '^jma_' "$TMPD/exported" && fail "exported, not jma_*: $(grep -cv '^jma_' "$TMPD/exported") symbols"
	cc -E -P -Iinclude -Ibuild/gen include/jemattach.h | grep -oP '(?<!\(\*)\bjma_\w+(?=\s*\()' | sort -u >"$TMPD/declared"
	expect_eq "$(comm -3 "$TMPD/exported" "$TMPD/declared" | tr -s '\t\n' '  ')" ""
	# jma_ is the public face only: every jma_ function the archive defines is
	# exported (internal ones take their folder's prefix: doc/library.md).
	nm --defined-only build/libjemattach.a 2>/dev/null | awk '$2 == "T" && $3 ~ /^jma_/ { print $3 }' |
		sort -u >"$TMPD/defined"
	expect_eq "$(comm -23 "$TMPD/defined" "$TMPD/exported" | tr '\n' ' ')" ""
	grep -qx sess_fail "$TMPD/exported" && fail "sess_fail is exported"
	nm -D --defined-only "$so" | grep -q " jma_open@@$(node)\$" || fail "no $(node) version node"
}

# The library speaks no program's language: what a caller could do is a
# hint (jma_errhints), which the tool words as its options.  Before, about 20
# of its messages told the caller to use --force, --emulate, --module...
t_library_names_no_option_of_the_tool() {
	local opt found=""
	strings build/libjemattach.so >"$TMPD/strings"
	for opt in $("$JEMATTACH" --help 2>&1 | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		grep -qF -- "$opt" "$TMPD/strings" && found+=" $opt"
	done
	expect_eq "$found" ""
}

# The crash points tests use (attach/crashpoint.h) are in the test build of
# the tool only: nothing installed, nor the tool under test, reads
# JEMATTACH_TEST_CRASH_AT or crashes on it.  Before, the library and the root
# exporter raised SIGSEGV at any engine step the environment named.
t_no_test_hook_is_installed() {
	local root=$TMPD/root pid f
	installed
	for f in "$root"/opt/jma/{bin/jemattach,lib/libjemattach.so.0,lib/libjemattach.a,lib/jemattach/jemattach-serve.so} \
		"$JEMATTACH" build/libjemattach.so build/jemattach-serve.so; do
		! grep -qa JEMATTACH_TEST "$f" || fail "$f carries a test hook"
	done
	start_fixture pid "$FIXTURES/jemfix"
	for f in "$root/opt/jma/bin/jemattach" "$JEMATTACH"; do
		jm_run env JEMATTACH_TEST_CRASH_AT=seized "$f" "$pid" get opt.narenas
		expect_rc 0
		expect_eq "$OUT" "$(fix "$pid" "get u opt.narenas")"
	done
}

# A program of someone else's, built from the installed files alone with
# pkg-config, shared and static: it reads what the fixture confirms, and the
# version it was built against is the library's (the Makefile's VERSION).
t_outside_program_builds_with_pkg_config() {
	local root=$TMPD/root pid flags version
	installed
	cat >"$TMPD/use.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jemattach.h>

int main(int argc, char **argv)
{
	struct jma_value v;
	jma_session *s;
	unsigned lib = jma_version();

	/* While the major is 0, each minor is an ABI of its own (src/libjemattach.map). */
	if (lib >> 8 != JMA_VERSION_NUMBER >> 8 || lib < JMA_VERSION_NUMBER) {
		fprintf(stderr, "use: built against %s, runs with %u.%u.%u\n", JMA_VERSION_STRING,
			lib >> 16, (lib >> 8) & 255, lib & 255);
		return 3;
	}
	if (argc == 2 && !strcmp(argv[1], "-V")) {
		printf("%d.%d.%d %u.%u.%u\n", JMA_VERSION_MAJOR, JMA_VERSION_MINOR, JMA_VERSION_PATCH,
		       lib >> 16, (lib >> 8) & 255, lib & 255);
		return 0;
	}
	s = jma_new(NULL);
	if (!s || argc != 2)
		return 2;
	if (jma_open(s, atoi(argv[1])) || jma_get(s, "opt.narenas", &v)) {
		fprintf(stderr, "use: %s\n", jma_errmsg(s));
		return 1;
	}
	printf("%u\n", v.u);
	jma_value_clear(&v);
	jma_free(s);
	return 0;
}
C
	export PKG_CONFIG_PATH=$root/opt/jma/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
	flags=$(pkg-config --cflags --libs jemattach) || fail "pkg-config: no jemattach"
	expect_match "$flags" "-I$root/opt/jma/include"
	cc -o "$TMPD/use" "$TMPD/use.c" $flags || fail "cannot build with: $flags"
	# The static archive and what it needs from elsewhere (Requires.private, Libs.private).
	flags=$(pkg-config --static --cflags --libs jemattach | sed 's/-ljemattach/-l:libjemattach.a/')
	cc -o "$TMPD/use-static" "$TMPD/use.c" $flags || fail "cannot build statically with: $flags"
	ldd "$TMPD/use-static" | grep -q libjemattach && fail "use-static loads libjemattach.so"
	start_fixture pid "$FIXTURES/jemfix"
	expect_eq "$(LD_LIBRARY_PATH=$root/opt/jma/lib "$TMPD/use" "$pid")" "$(fix "$pid" "get u opt.narenas")"
	expect_eq "$("$TMPD/use-static" "$pid")" "$(fix "$pid" "get u opt.narenas")"
	LD_LIBRARY_PATH=$root/opt/jma/lib ldd "$TMPD/use" | grep -q "$root/opt/jma/lib/libjemattach.so.0" ||
		fail "use does not load the installed library: $(LD_LIBRARY_PATH=$root/opt/jma/lib ldd "$TMPD/use")"
	version=$(sed -n 's/^VERSION *:= *//p' Makefile)
	expect_eq "$(LD_LIBRARY_PATH=$root/opt/jma/lib "$TMPD/use" -V)" "$version $version"
	expect_eq "$("$TMPD/use-static" -V)" "$version $version"
	# What the rule for ABI changes stands on: the program names the node it
	# was linked against, which a breaking minor renames (the loader then
	# refuses it at its start).
	readelf -V "$TMPD/use" | grep -A2 'File: libjemattach.so.0' | grep -q "Name: $(node) " ||
		fail "use needs no version node of libjemattach: $(readelf -V "$TMPD/use" | tail -8)"
}

# node: the version node everything of the library is under (the map's last).
node() { sed -n 's/^\(JEMATTACH_[0-9.]*\) {$/\1/p' src/libjemattach.map | tail -1; }

# The written rule at work: a program linked against 0.1 (node JEMATTACH_0,
# before jma_census and the options grew) is refused by the loader at its
# start, never run with the old layouts; and the structs that grow take an
# older program's shorter options (check_session has the sizes' cases).
t_program_of_an_older_abi_is_refused_at_load() {
	local root=$TMPD/root old=$TMPD/old out rc
	installed
	mkdir -p "$old"
	# The 0.1 library's face, as far as this program sees it: its node and names.
	printf 'JEMATTACH_0 { global: jma_*; local: *; };\n' >"$old/map"
	printf 'void *jma_new(const void *o) { (void)o; return 0; }\nvoid jma_free(void *s) { (void)s; }\n' >"$old/lib.c"
	cc -shared -fPIC -Wl,-soname,libjemattach.so.0 -Wl,--version-script="$old/map" \
		-o "$old/libjemattach.so.0" "$old/lib.c" || fail "cannot build the 0.1 stand-in"
	printf 'void *jma_new(const void *); void jma_free(void *);\nint main(void) { jma_free(jma_new(0)); return 0; }\n' >"$old/use.c"
	cc -o "$old/use" "$old/use.c" "$old/libjemattach.so.0" || fail "cannot link against the stand-in"
	readelf -V "$old/use" | grep -q "Name: JEMATTACH_0 " || fail "the old program names no JEMATTACH_0"
	LD_LIBRARY_PATH=$old "$old/use" || fail "the old program does not run with its own library"
	out=$(LD_LIBRARY_PATH=$root/opt/jma/lib "$old/use" 2>&1) && rc=0 || rc=$?
	[[ $rc != 0 ]] || fail "a 0.1 program ran with the $(node) library"
	expect_match "$out" "version .JEMATTACH_0' not found"
}

# The tool links the libunwind scripts/build-libunwind.sh chose: its own
# static build (no libunwind shared object mapped), or Debian's, said so.
t_libunwind_as_the_build_chose() {
	local link
	link=$(cat build/libunwind/link 2>/dev/null || cat build/libunwind/link.shared) ||
		fail "no build/libunwind/link"
	if [[ $link == *libunwind-ptrace.a* ]]; then
		ldd "$JEMATTACH" | grep -q libunwind && fail "static libunwind, but: $(ldd "$JEMATTACH")"
	else
		ldd "$JEMATTACH" | grep -q libunwind-ptrace || fail "no libunwind at all: $(ldd "$JEMATTACH")"
	fi
	return 0
}

t_libunwind_source_unavailable_falls_back_to_debians() {
	local out
	echo "not a tarball" >"$TMPD/bogus.tar.gz"
	out=$(LIBUNWIND_URL=file://$TMPD/bogus.tar.gz scripts/build-libunwind.sh "$TMPD/lu1" 2>&1) ||
		fail "exit $?: $out"
	expect_match "$out" "checksum mismatch; linking Debian's shared libunwind"
	expect_eq "$(cat "$TMPD/lu1/link")" "-lunwind-ptrace -lunwind-generic -lunwind"
	out=$(LIBUNWIND_URL=file://$TMPD/missing.tar.gz scripts/build-libunwind.sh "$TMPD/lu2" 2>&1) ||
		fail "exit $?: $out"
	expect_match "$out" "could not fetch file://$TMPD/missing.tar.gz; linking Debian's shared libunwind"
	expect_eq "$(cat "$TMPD/lu2/link")" "-lunwind-ptrace -lunwind-generic -lunwind"
	! compgen -G "$TMPD/lu*.tmp.*" >/dev/null && [[ ! -e $TMPD/lu2/lib ]] ||
		fail "left behind: $(ls "$TMPD")"
}

run_tests
