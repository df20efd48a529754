#!/bin/sh
# jemalloc-prof.sh -- the arm64 guest's jemalloc with heap profiling: Debian's arm64
# libjemalloc2 is built without --enable-prof (its `prof status` says config.prof false), so
# prof on/off/dump, analyze and prof window are tested against this one.
#
# Usage: scripts/aarch64/jemalloc-prof.sh [OUT]   (default build/aarch64)
# Cross-builds jemalloc 5.3.0 -- Debian 12's version, from the same unmodified source tree as
# the version matrix (JEMALLOC_SRC, ../shared/jemalloc: scripts/build-jemalloc.sh) -- with
# gcc-aarch64-linux-gnu, configured as Debian configures its arm64 package (64 KiB pages) plus
# --enable-prof, installed under /opt/jemalloc-prof in $OUT/out/jemalloc-prof, which the guest
# sees as /mnt/out/jemalloc-prof.  Built once (a .done marker); without a source it says so and
# exits 0: the guest then has Debian's library only.
set -eu
OUT=${1:-build/aarch64}
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${JEMALLOC_SRC:-$top/../shared/jemalloc}
dest=$OUT/out/jemalloc-prof
[ -f "$dest/.done" ] && exit 0
if [ ! -f "$src/jemalloc-5.3.0.tar.xz" ]; then
	echo "jemalloc-prof: no $src/jemalloc-5.3.0.tar.xz: the guest tests Debian's jemalloc only" >&2
	exit 0
fi
t0=$(date +%s)
rm -rf "$dest" "$OUT/jemalloc-prof.build"
mkdir -p "$OUT/jemalloc-prof.build" "$dest"
dest=$(cd "$dest" && pwd)
tar -xJf "$src/jemalloc-5.3.0.tar.xz" -C "$OUT/jemalloc-prof.build"
cd "$OUT/jemalloc-prof.build"/jemalloc-*
echo "jemalloc-prof: cross-building jemalloc 5.3.0 --enable-prof for arm64"
{
	[ -x configure ] || autoconf
	# Cross-compiling, configure cannot run its probe of the page size: Debian's
	# arm64 package fixes it at 64 KiB (--with-lg-page=16), as here.
	./configure --host=aarch64-linux-gnu --prefix=/opt/jemalloc-prof --enable-prof \
		--with-lg-page=16 --disable-cxx
	make -j"${JOBS:-2}" build_lib_shared
	make DESTDIR="$dest" install_lib_shared install_include install_bin
} > ../build.log 2>&1 || { echo "jemalloc-prof: the build failed; see $OUT/jemalloc-prof.build/build.log" >&2; exit 1; }
touch "$dest/.done"
echo "jemalloc-prof: built in $(( $(date +%s) - t0 )) s"
