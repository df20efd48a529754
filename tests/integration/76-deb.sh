#!/bin/bash
# 76-deb.sh -- `make deb`: lintian finds no error, the package installs (into a
# scratch root: this machine's own /usr is not ours to change) and what it
# installed works -- the tool on a live process, the library through its
# pkg-config file, the unit; apt resolves its dependencies.
# runner: light (beside a long file: no clock in its assertions)
# build: tool (the package is made of the normal build)
source tests/lib.sh

t_make_deb_installs_and_works() {
	local deb root=$TMPD/root pid ma
	command -v dpkg-deb >/dev/null || skip "no dpkg-deb"
	deb=$(make --no-print-directory -s deb 2>"$TMPD/make.err" | tail -1) ||
		fail "make deb: $(tail -3 "$TMPD/make.err")"
	[[ -f $deb ]] || fail "make deb made no package ($deb)"
	if command -v lintian >/dev/null; then
		lintian "$deb" >"$TMPD/lintian" 2>&1
		grep '^E:' "$TMPD/lintian" && fail "lintian errors"
	fi
	# Every dependency is in the archive (simulated: nothing is installed).
	apt-get -s install "./$deb" >"$TMPD/apt" 2>&1 || fail "apt: $(tail -3 "$TMPD/apt")"
	mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
	touch "$root/var/lib/dpkg/status"
	dpkg --root="$root" --force-depends --force-script-chrootless -i "$deb" >"$TMPD/dpkg" 2>&1 ||
		fail "dpkg -i: $(tail -3 "$TMPD/dpkg")"
	ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	for f in usr/bin/jemattach usr/include/jemattach.h "usr/lib/$ma/libjemattach.so.0" \
		"usr/lib/$ma/pkgconfig/jemattach.pc" usr/share/man/man1/jemattach.1.gz \
		usr/share/jemattach/jemalloc.gdb lib/systemd/system/jemattach-serve.service \
		usr/share/doc/jemattach/copyright usr/lib/jemattach/jemattach-serve.so; do
		[[ -e $root/$f ]] || fail "not installed: $f"
	done
	start_fixture pid "$FIXTURES/jemfix"
	expect_eq "$("$root/usr/bin/jemattach" "$pid" get opt.narenas)" "$(fix "$pid" "get u opt.narenas")"
	"$root/usr/bin/jemattach" serve --help | grep -q -- "--web-config" || fail "serve --help"
	# The installed tool finds its server module and serves.
	local sp port
	port=$(free_port)
	"$root/usr/bin/jemattach" serve --listen "127.0.0.1:$port" --target "pid=$pid" 2>"$TMPD/serve.err" &
	sp=$!
	STARTED+=("$sp")
	for _ in $(seq 600); do grep -q serving "$TMPD/serve.err" && break; sleep 0.05; done
	grep -q serving "$TMPD/serve.err" || fail "the installed serve did not start: $(cat "$TMPD/serve.err")"
	expect_match "$(curl -s --max-time 60 "http://127.0.0.1:$port/metrics")" \
		"jemattach_target_up\{pid=\"$pid\"[^}]*\} 1" || fail "serve said: $(cat "$TMPD/serve.err")"
	# The library through its pkg-config file.
	printf '#include <jemattach.h>\nint main(void) { jma_free(jma_new(NULL)); return 0; }\n' >"$TMPD/use.c"
	cc -o "$TMPD/use" "$TMPD/use.c" $(PKG_CONFIG_PATH="$root/usr/lib/$ma/pkgconfig" \
		PKG_CONFIG_SYSROOT_DIR="$root" pkg-config --cflags --libs jemattach) ||
		fail "cannot build with the pkg-config file"
	LD_LIBRARY_PATH="$root/usr/lib/$ma" "$TMPD/use" || fail "the linked program failed"
}

run_tests
