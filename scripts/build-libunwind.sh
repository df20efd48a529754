#!/bin/sh
# build-libunwind.sh DIR -- libunwind for the jemattach tool, as a static,
# position-independent archive built from Debian's own source.
#
# Why: Debian's libunwind-ptrace.a is not position-independent, so a PIE tool
# can only take the shared objects (libunwind-ptrace, libunwind-x86_64,
# libunwind, and the liblzma they load), and mapping and relocating them is
# about 0.5 ms of every command's start (`jemattach -V`: 1.7 -> 1.2 ms).  And
# libunwind blocks every signal around each of its locks by default: two
# sigprocmask calls per lock, 116 system calls in one `get`.  jemattach never
# unwinds from a signal handler, so it builds without that.
#
# The source is the one the installed libunwind-dev was built from (1.6.2,
# the checksum pinned here), so its headers, which the library compiles
# against, describe the archive.  When it cannot be had (another version,
# no network), Debian's shared libunwind is used, and this says so.
#
# Writes DIR/link: what the tool links libunwind with, either way.
# LIBUNWIND_URL names another place for the same tarball (a mirror; the
# checksum still decides).
set -eu
dir=$1
ver=1.6.2
sha=4a6aec666991fb45d0889c44aede8ad6eb108071c3554fcdff671f9c94794976
url=${LIBUNWIND_URL:-http://deb.debian.org/debian/pool/main/libu/libunwind/libunwind_$ver.orig.tar.gz}
shared="-lunwind-ptrace -lunwind-generic -lunwind"

# One builder at a time (make check builds the tool and the ASan build side
# by side, both linking this): a second waits, then finds it done (a link
# newer than this script).
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
[ "$dir/link" -nt "$0" ] && exit 0

fallback() {
	echo "jemattach: $1; linking Debian's shared libunwind (each command starts ~0.5 ms slower)" >&2
	mkdir -p "$dir"
	echo "$shared" > "$dir/link.tmp"
	mv "$dir/link.tmp" "$dir/link"
	exit 0
}

have=$(dpkg-query -W -f='${Version}' libunwind-dev 2>/dev/null || true)
case $have in
"$ver"-*) ;;
*) fallback "libunwind-dev is ${have:-not installed}, not $ver" ;;
esac
tmp="$dir.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
command -v curl >/dev/null || fallback "no curl to fetch libunwind's source"
curl -fsS --retry 2 --max-time 120 -o "$tmp/src.tar.gz" "$url" ||
	fallback "could not fetch $url"
echo "$sha  $tmp/src.tar.gz" | sha256sum -c --status || fallback "$url: checksum mismatch"
tar xzf "$tmp/src.tar.gz" -C "$tmp"
mkdir "$tmp/b"
# Only what the remote unwinder needs: no local unwinding extras, no
# MiniDebugInfo (libunwind would need liblzma for it; libdw reads it for us).
(cd "$tmp/b" && "../libunwind-$ver/configure" --quiet --disable-shared --enable-static --with-pic \
	--disable-block-signals --disable-minidebuginfo --disable-zlibdebuginfo --disable-coredump \
	--disable-setjmp --disable-documentation --disable-tests --disable-cxx-exceptions \
	CFLAGS='-O2 -g' > ../configure.log 2>&1 &&
	make -C src libunwind-ptrace.la libunwind-x86_64.la libunwind.la > ../make.log 2>&1) || {
	tail -20 "$tmp/configure.log" "$tmp/make.log" >&2
	fallback "building libunwind $ver failed"
}
mkdir "$tmp/lib"
for a in libunwind-ptrace libunwind-x86_64 libunwind; do
	cp "$tmp/b/src/.libs/$a.a" "$tmp/lib/"
done
rm -rf "$dir"
mkdir -p "$dir"
mv "$tmp/lib" "$dir/lib"
echo "$dir/lib/libunwind-ptrace.a $dir/lib/libunwind-x86_64.a $dir/lib/libunwind.a" > "$dir/link"
echo "built libunwind $ver (static, position-independent) in $dir"
