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
