#!/bin/sh
# deb.sh -- `make deb`: a Debian package of what `make install` installs, built with dpkg-deb.
#
# Usage: scripts/deb.sh BUILD VERSION   (after `make install DESTDIR=BUILD/deb/root PREFIX=/usr`,
# the tool replaced by BUILD/jemattach-shared)
# Lays the staged tree out as Debian's policy wants (the library under the
# multiarch directory, a pkg-config file, the man page compressed, the
# systemd unit, copyright and changelog), strips it, computes the
# dependencies with dpkg-shlibdeps, and writes BUILD/jemattach_VERSION-1_ARCH.deb.
set -eu
BUILD=$1
VERSION=$2
ARCH=$(dpkg --print-architecture)
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
DEB=$BUILD/deb
ROOT=$DEB/root
DOC=$ROOT/usr/share/doc/jemattach
TOP=$(pwd)
# Who the package names: $DEB_MAINTAINER, else the author of the last commit.
MAINT=${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || true)}
MAINT=${MAINT:-jemattach maintainers <maintainers@jemattach.invalid>}

# The library where Debian keeps them, with its pkg-config file.
mkdir -p "$ROOT/usr/lib/$MA/pkgconfig"
mv "$ROOT/usr/lib/libjemattach.a" "$ROOT/usr/lib/libjemattach.so.0" "$ROOT/usr/lib/$MA/"
rm -f "$ROOT/usr/lib/libjemattach.so" "$ROOT/usr/lib/pkgconfig/jemattach.pc"
rmdir "$ROOT/usr/lib/pkgconfig"
ln -s libjemattach.so.0 "$ROOT/usr/lib/$MA/libjemattach.so"
cat >"$ROOT/usr/lib/$MA/pkgconfig/jemattach.pc" <<EOF
prefix=/usr
libdir=\${prefix}/lib/$MA
includedir=\${prefix}/include

Name: jemattach
Description: jemalloc's control API inside another, running process
Version: $VERSION
Requires.private: libdw libelf libunwind-ptrace libprotobuf-c zlib jansson
Libs: -L\${libdir} -ljemattach
Libs.private: -lm
Cflags: -I\${includedir}
EOF
chmod 644 "$ROOT/usr/lib/$MA/pkgconfig/jemattach.pc" "$ROOT/usr/lib/$MA/libjemattach.so.0"

strip --strip-unneeded --remove-section=.comment --remove-section=.note \
	"$ROOT/usr/bin/jemattach" "$ROOT/usr/lib/$MA/libjemattach.so.0" \
	"$ROOT/usr/lib/jemattach/jemattach-serve.so"
strip --strip-debug --enable-deterministic-archives "$ROOT/usr/lib/$MA/libjemattach.a"
gzip -9n "$ROOT/usr/share/man/man1/jemattach.1"

mkdir -p "$ROOT/lib/systemd/system" "$DOC"
install -m 644 dist/jemattach-serve.service "$ROOT/lib/systemd/system/"
install -m 644 doc/serve.md "$DOC/serve.md"
cat >"$DOC/copyright" <<EOF
jemattach: attach to a running jemalloc process and run jemalloc's control API inside it.

Copyright: 2026 the jemattach authors.
The authors have not yet chosen a license for jemattach; until they do, no
rights are granted beyond those of the law.
EOF
d=$(date -u -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
cat >"$DEB/changelog" <<EOF
jemattach ($VERSION-1) unstable; urgency=medium

  * Built from the jemattach source tree by make deb.

 -- $MAINT  $d
EOF
gzip -9nc "$DEB/changelog" >"$DOC/changelog.Debian.gz"
chmod 644 "$DOC"/*

# Dependencies, as dpkg-shlibdeps finds them for the binaries.
mkdir -p "$DEB/src/debian"
printf 'Source: jemattach\n\nPackage: jemattach\nArchitecture: any\n' >"$DEB/src/debian/control"
deps=$(cd "$DEB/src" && dpkg-shlibdeps -O "$TOP/$ROOT/usr/bin/jemattach" \
	"$TOP/$ROOT/usr/lib/$MA/libjemattach.so.0" "$TOP/$ROOT/usr/lib/jemattach/jemattach-serve.so" \
	2>/dev/null | sed -n 's/^shlibs:Depends=//p')

mkdir -p "$ROOT/DEBIAN"
cat >"$ROOT/DEBIAN/control" <<EOF
Package: jemattach
Version: $VERSION-1
Architecture: $ARCH
Maintainer: $MAINT
Installed-Size: $(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
Depends: $deps
Recommends: gdb
Section: devel
Priority: optional
Homepage: https://example.com/jemattach
Description: jemalloc's control API inside a running process, from outside
 jemattach attaches to a running, unmodified jemalloc process by PID, borrows
 one thread for about a millisecond and runs jemalloc's mallctl,
 malloc_stats_print and heap-profiling control inside it, leaving the process
 exactly as it was.  It analyzes heap profiles (text, JSON, flame graphs,
 pprof), records memory over time, works on hung processes and core files
 through an emulator, and serves every jemalloc process of a host to
 Prometheus, go tool pprof and Parca (jemattach serve, with a systemd unit).
 .
 Also: the libjemattach library with its headers and pkg-config file, and a
 gdb command library.
EOF
printf 'libjemattach 0 jemattach (>= %s)\n' "$VERSION" >"$ROOT/DEBIAN/shlibs"
printf 'activate-noawait ldconfig\n' >"$ROOT/DEBIAN/triggers"
chmod 644 "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/shlibs" "$ROOT/DEBIAN/triggers"
(cd "$ROOT" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) \
	>"$ROOT/DEBIAN/md5sums"
chmod 644 "$ROOT/DEBIAN/md5sums"
out="$BUILD/jemattach_${VERSION}-1_$ARCH.deb"
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$out" >/dev/null
echo "$out"
