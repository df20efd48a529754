#!/bin/sh
# build-jemalloc.sh -- build one upstream jemalloc release, configured as a project ships it.
#
#   scripts/build-jemalloc.sh NAME      e.g. 5.2.1, 4.5.0, 3.6.0, dev-295e489, 5.2.1-je_,
#                                       5.3.0-noprof, 3.6.0-ie-noprof, 5.3.0-redis,
#                                       5.3.0-tikv-vaddr57
#
# NAME is VERSION followed by flags, each after a "-":
#
#   PREFIX_   --with-jemalloc-prefix=PREFIX_ (a flag ending in "_": je_, _rjem_)
#   noprof    --disable-prof (for the sampler, 65-sampler)
#   ie        initial-exec TLS (for the census, 80-versions' 3.6.0-ie-noprof: 3.x's configure
#             picks it where its tls_model test compiles; today's gcc fails the test,
#             -Wunused-but-set-variable under -Werror, and 3.6.0 falls back to global-dynamic)
#   redis     as Redis's deps/Makefile builds its bundled copy: --with-version=VERSION-0-g0
#             --with-lg-quantum=3 --with-jemalloc-prefix=je_ (and, from 5.3 as Redis 7.2 has it,
#             --disable-cache-oblivious), -g3 -O3 -funroll-loops, no profiling; the static
#             lib/libjemalloc.a only
#   tikv      as tikv-jemalloc-sys's build.rs: --with-jemalloc-prefix=_rjem_
#             --with-private-namespace=_rjem_ --disable-cxx --enable-doc=no --enable-shared=no,
#             with its "stats" feature (--enable-stats) and without "profiling"; the static
#             lib/libjemalloc_pic.a only
#   vaddrN    LG_VADDR N: a build made on a host whose CPU has N-bit virtual addresses (57:
#             Intel Ice Lake and later servers, AMD Zen 4; configure reads the build host's
#             CPU, and a cross build gets 57).  Without it an x86_64 5.x build gets 48, the
#             common case, whatever CPU this machine has: a build's layout must not depend
#             on where the tests run.  Given as configure's cache variable je_cv_lg_vaddr,
#             which every 5.x reads (5.0 and 5.1 have no --with-lg-vaddr); 3.x and 4.x
#             have no LG_VADDR
#   pageN     --with-lg-page=N (14: 16 KiB, 16: 64 KiB pages)
#
# Without redis or tikv it installs the shared library, with profiling, into
# build/versions/NAME/inst ($JE_DEST/NAME: another folder for the builds); the
# static ones leave their archive in NAME/inst/lib.  Does nothing when that
# install is complete.  The source is, in this order:
#
#   $JEMALLOC_SRC/jemalloc-VERSION.tar.xz   a local mirror of git trees with a
#                                           VERSION file (the CI's ../shared/jemalloc;
#                                           its default when that folder exists)
#   $JEMALLOC_SRC/jemalloc-VERSION.tar.bz2  a local copy of the release asset
#   Debian's source package of jemalloc (5.3.0: its orig tarball is the release
#   asset, byte for byte), from the archive apt is configured with, kept under
#   build/jemalloc-dl/
#   the release asset jemalloc-VERSION.tar.bz2 from GitHub (JEMALLOC_URL names
#   another base URL), kept under build/jemalloc-dl/
#
# A tarball that is not a local tree is used only when its SHA-256 is the one
# pinned below.  When no source can be had (no network, a dev snapshot with no
# release asset), the build is not an error: this writes the reason to
# NAME/unavailable, says it, and exits 0; the tests report that build's tests
# as skipped with that reason.
set -eu
name=${1:?usage: build-jemalloc.sh VERSION[-FLAG...]}
top=$(cd "$(dirname "$0")/.." && pwd)
case $name in
dev-*) v=$(echo "$name" | cut -d- -f1-2); flags=$(echo "$name" | cut -s -d- -f3-) ;;
*) v=${name%%-*}; flags=$(echo "$name" | cut -s -d- -f2-) ;;
esac
prof=--enable-prof
conf=
static=
vaddr=
cflags=
for f in $(echo "$flags" | tr - ' '); do
	case $f in
	*_) conf="$conf --with-jemalloc-prefix=$f" ;;
	noprof) prof=--disable-prof ;;
	ie) conf="$conf je_cv_tls_model=yes" ;;
	redis)
		prof=--disable-prof
		static=lib/libjemalloc.a
		cflags="-std=gnu99 -Wall -pipe -g3 -O3 -funroll-loops"
		conf="$conf --with-version=$v-0-g0 --with-lg-quantum=3 --with-jemalloc-prefix=je_"
		case $v in 5.[3-9]*) conf="$conf --disable-cache-oblivious" ;; esac ;;
	tikv)
		prof=--disable-prof
		static=lib/libjemalloc_pic.a
		conf="$conf --with-jemalloc-prefix=_rjem_ --with-private-namespace=_rjem_ --enable-doc=no"
		conf="$conf --enable-shared=no --enable-stats" ;;
	vaddr[0-9]*) vaddr=${f#vaddr} ;;
	page[0-9]*) conf="$conf --with-lg-page=${f#page}" ;;
	*) echo "build-jemalloc.sh: $name: unknown flag \"$f\"" >&2; exit 2 ;;
	esac
done
case $v in
[34].*)
	[ -z "$vaddr" ] || { echo "build-jemalloc.sh: $name: $v has no LG_VADDR" >&2; exit 2; } ;;
*)
	if [ -z "$vaddr" ] && [ "$(uname -m)" = x86_64 ]; then
		vaddr=48
	fi ;;
esac
conf="$conf${vaddr:+ je_cv_lg_vaddr=$vaddr}"
if [ -z "${JEMALLOC_SRC:-}" ] && [ -d "$top/../shared/jemalloc" ]; then
	JEMALLOC_SRC=$top/../shared/jemalloc
fi
src=${JEMALLOC_SRC:-}
base=${JEMALLOC_URL:-https://github.com/jemalloc/jemalloc/releases/download}
root=${JE_DEST:-$top/build/versions}
dest=$root/$name
dl=$top/build/jemalloc-dl

# The SHA-256 of each release asset jemalloc-V.tar.bz2, as distributions' build
# recipes publish it (read there, not computed from a download of ours):
#   3.6.0  Homebrew/homebrew-core Formula/jemalloc.rb (3.6.0) and Homebrew's
#          neovim formula (its jemalloc resource from the GitHub release URL);
#          Arch's lib32/x32 jemalloc PKGBUILD sha256sums
#   4.5.0  Homebrew/homebrew-core Formula/jemalloc.rb (4.5.0); nixpkgs jemalloc
#          default.nix; termux-packages libjemalloc/build.sh; spack jemalloc/package.py
#   5.0.1  Homebrew/homebrew-core Formula/jemalloc.rb (5.0.1); termux
#          packages/libjemalloc/build.sh (TERMUX_PKG_SHA256)
#   5.2.1  spack var/spack/repos/builtin/packages/jemalloc/package.py; Bitcoin ABC
#          depends/packages/jemalloc.mk; nixpkgs arrow-cpp (SRI sha256-NDMOXOJ2...)
#   5.3.0  Homebrew/homebrew-core Formula/jemalloc.rb (5.3.0); spack package.py;
#          termux-user-repository tur/libjemalloc/build.sh; and Debian's
#          jemalloc_5.3.0-1.dsc (Checksums-Sha256 of jemalloc_5.3.0.orig.tar.bz2)
sha_of() {
	case $1 in
	3.6.0) echo e16c2159dd3c81ca2dc3b5c9ef0d43e1f2f45b04548f42db12e7c12d7bdf84fe ;;
	4.5.0) echo 9409d85664b4f135b77518b0b118c549009dc10f6cba14557d170476611f6780 ;;
	5.0.1) echo 4814781d395b0ef093b21a08e8e6e0bd3dab8762f9935bbfb71679b0dea7c3e9 ;;
	5.2.1) echo 34330e5ce276099e2e8950d9335db5a875689a4c6a56751ef3b1d8c537f887f6 ;;
	5.3.0) echo 2db82d1e7119df3e71b7640219b6dfe84789bc0537983c3b7ac4f7189aecfeaa ;;
	*) echo "" ;;
	esac
}

# The releases whose source package Debian keeps in its archive (bookworm's).
in_debian() { [ "$1" = 5.3.0 ]; }

# unavailable REASON: no source for this version; not a build failure.
unavailable() {
	echo "$1" > "$dest/unavailable"
	echo "  JEMALLOC $name: not built: $1" >&2
	exit 0
}

# verified FILE: FILE is the release asset whose sum is pinned above.
verified() {
	[ -n "$sha" ] && echo "$sha  $1" | sha256sum -c --status
}

# fetch URL: URL into $asset if its sum is the pinned one; 1 (and why in
# $why) if not.
fetch() {
	command -v curl >/dev/null || { why="no curl to fetch $1"; return 1; }
	mkdir -p "$dl"
	if ! curl -fsSL --retry 2 --connect-timeout 20 --max-time 300 -o "$asset.tmp" "$1" \
		2>"$dest/fetch.log"; then
		rm -f "$asset.tmp"
		why="could not fetch $1 ($(tail -1 "$dest/fetch.log"))"
		return 1
	fi
	verified "$asset.tmp" || { rm -f "$asset.tmp"; why="$1: SHA-256 is not the pinned one"; return 1; }
	mv "$asset.tmp" "$asset"
}

# from_debian: the orig tarball from the pool of each archive apt is set up
# with (apt-get indextargets names them: no host is written here).
from_debian() {
	command -v apt-get >/dev/null || { why="no apt-get to name Debian's archive"; return 1; }
	for repo in $(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' 2>/dev/null |
		sort -u); do
		fetch "${repo%/}/pool/main/j/jemalloc/jemalloc_$v.orig.tar.bz2" && return 0
	done
	why=${why:-"apt names no archive"}
	return 1
}

mkdir -p "$root"
# One builder per build at a time (make -j, a second make in parallel).
exec 9>"$dest.lock"
flock 9
[ -f "$dest/inst/.done" ] && exit 0
rm -rf "$dest"
mkdir -p "$dest"
sha=$(sha_of "$v")
if [ -n "$src" ] && [ -f "$src/jemalloc-$v.tar.xz" ]; then
	tar -xJf "$src/jemalloc-$v.tar.xz" -C "$dest"
elif [ -n "$src" ] && [ -f "$src/jemalloc-$v.tar.bz2" ]; then
	verified "$src/jemalloc-$v.tar.bz2" ||
		unavailable "$src/jemalloc-$v.tar.bz2: not the release asset whose SHA-256 is pinned here"
	tar -xjf "$src/jemalloc-$v.tar.bz2" -C "$dest"
else
	[ -n "$sha" ] || unavailable "no release asset for $v: set JEMALLOC_SRC to a folder with jemalloc-$v.tar.xz"
	asset=$dl/jemalloc-$v.tar.bz2
	why=
	if ! verified "$asset" 2>/dev/null; then
		deb=
		if in_debian "$v"; then
			from_debian && deb=1 || deb="Debian's source package: $why"
		fi
		if [ "$deb" != 1 ]; then
			fetch "$base/$v/jemalloc-$v.tar.bz2" ||
				unavailable "$why${deb:+; $deb}${src:+; nor in $src}"
		fi
	fi
	tar -xjf "$asset" -C "$dest"
fi
cd "$dest"/jemalloc-*
echo "  JEMALLOC $name"
{
	# The git trees of a mirror have no configure script yet; release assets do.
	[ -x configure ] || autoconf
	# Fixtures are ordinary executables: no reason to keep initial-exec TLS out.
	# shellcheck disable=SC2086 # $conf is a list of options
	./configure --prefix="$dest/inst" "$prof" --disable-cxx $conf ${cflags:+CFLAGS="$cflags"}
	if [ -n "$static" ]; then
		# Only the archive the project links (and the headers of its prefix).
		make -j"${JOBS:-2}" "$static"
		mkdir -p "$dest/inst/lib" "$dest/inst/include/jemalloc"
		cp "$static" "$dest/inst/lib/"
		cp include/jemalloc/jemalloc.h "$dest/inst/include/jemalloc/"
	else
		make -j"${JOBS:-2}" build_lib_shared
		make install_lib_shared install_include install_bin
	fi
} >"$dest/build.log" 2>&1 || { echo "build-jemalloc.sh: building $name failed; see $dest/build.log" >&2; exit 1; }
touch "$dest/inst/.done"
