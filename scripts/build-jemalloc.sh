#!/bin/sh
# build-jemalloc.sh -- build one upstream jemalloc release for the version matrix.
#
#   scripts/build-jemalloc.sh NAME      e.g. 5.2.1, 4.5.0, 3.6.0, dev-295e489, 5.2.1-je_,
#                                       5.3.0-noprof
#
# Unpacks ../shared/jemalloc/jemalloc-VERSION.tar.xz (or $JEMALLOC_SRC/...) under
# build/versions/ and installs it, with profiling, into build/versions/NAME/inst;
# a NAME ending in -PREFIX_ is built with that symbol prefix, one ending in
# -noprof with --disable-prof (for the sampler, 65-sampler).  Does nothing when
# that install is complete.
set -eu
name=${1:?usage: build-jemalloc.sh VERSION[-PREFIX_]}
prof=--enable-prof
case $name in
*-*_) v=${name%-*}; prefix=${name##*-} ;;
*-noprof) v=${name%-noprof}; prefix=; prof=--disable-prof ;;
*) v=$name; prefix= ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
src=${JEMALLOC_SRC:-$top/../shared/jemalloc}
tarball=$src/jemalloc-$v.tar.xz
dest=$top/build/versions/$name
mkdir -p "$top/build/versions"
# One builder per version at a time (make -j, a second make in parallel).
exec 9>"$dest.lock"
flock 9
[ -f "$dest/inst/.done" ] && exit 0
if [ ! -f "$tarball" ]; then
	echo "build-jemalloc.sh: $tarball not found (set JEMALLOC_SRC to the folder of the tarballs)" >&2
	exit 1
fi
rm -rf "$dest"
mkdir -p "$dest"
tar -xJf "$tarball" -C "$dest"
cd "$dest"/jemalloc-*
echo "  JEMALLOC $name"
{
	autoconf
	# Fixtures are ordinary executables: no reason to keep initial-exec TLS out.
	./configure --prefix="$dest/inst" "$prof" --disable-cxx \
		${prefix:+--with-jemalloc-prefix=$prefix}
	make -j"${JOBS:-2}" build_lib_shared
	make install_lib_shared install_include install_bin
} >"$dest/build.log" 2>&1 || { echo "build-jemalloc.sh: building $name failed; see $dest/build.log" >&2; exit 1; }
touch "$dest/inst/.done"
