#!/bin/bash
# 05-install.sh -- make install honours PREFIX and DESTDIR, and what it installs works.
source tests/lib.sh

t_install_into_destdir() {
	local root=$TMPD/root pid
	make --no-print-directory -s install DESTDIR="$root" PREFIX=/opt/jma >"$TMPD/install.log" 2>&1 ||
		fail "make install: $(tail -3 "$TMPD/install.log")"
	for f in bin/jemattach lib/libjemattach.a lib/libjemattach.so.0 lib/libjemattach.so \
		include/jemattach.h include/jemattach/session.h include/jemattach/heap.h \
		share/man/man1/jemattach.1 share/jemattach/jemalloc.gdb; do
		[[ -e $root/opt/jma/$f ]] || fail "missing $f"
	done
	expect_eq "$("$root/opt/jma/bin/jemattach" --gdb-script)" "$root/opt/jma/share/jemattach/jemalloc.gdb"
	start_fixture pid "$FIXTURES/jemfix"
	expect_eq "$("$root/opt/jma/bin/jemattach" "$pid" get opt.narenas)" "$(fix "$pid" "get u opt.narenas")"
	# The installed headers are enough to build against the library.
	printf '#include <jemattach.h>\nint main(void) { jma_free(jma_new(NULL)); return 0; }\n' >"$TMPD/use.c"
	cc -I"$root/opt/jma/include" -o "$TMPD/use" "$TMPD/use.c" "$root/opt/jma/lib/libjemattach.a" \
		$(pkg-config --libs libdw libelf libunwind-ptrace libprotobuf-c zlib jansson) -lm ||
		fail "cannot link against the installed library"
	"$TMPD/use" || fail "the linked program failed"
}

run_tests
