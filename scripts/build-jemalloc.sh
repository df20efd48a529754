#!/bin/sh
# build-jemalloc.sh -- build one upstream jemalloc release for the version matrix.
#
#   scripts/build-jemalloc.sh NAME      e.g. 5.2.1, 4.5.0, 3.6.0, dev-295e489, 5.2.1-je_,
#                                       5.3.0-noprof, 3.6.0-ie-noprof
#
# Installs jemalloc VERSION, with profiling, into build/versions/NAME/inst; a
# NAME ending in -PREFIX_ is built with that symbol prefix, one ending in
# -noprof with --disable-prof (for the sampler, 65-sampler), one ending in
# -ie-noprof also with initial-exec TLS (for the census, 80-versions: 3.x's
# configure picks it where its tls_model test compiles; today's gcc fails the
# test, -Wunused-but-set-variable under -Werror, and 3.6.0 falls back to
# global-dynamic TLS).  Does nothing when
# that install is complete.  The source is, in this order:
#
#   $JEMALLOC_SRC/jemalloc-VERSION.tar.xz   a local mirror of git trees with a
#                                           VERSION file (the CI's ../shared/jemalloc;
#                                           its default when that folder exists)
#   $JEMALLOC_SRC/jemalloc-VERSION.tar.bz2  a local copy of the release asset
#   the release asset jemalloc-VERSION.tar.bz2 from GitHub (JEMALLOC_URL names
#   another base URL), kept under build/jemalloc-dl/
#
# A release asset is used only when its SHA-256 is the one pinned below.  When
# no source can be had (no network, a dev snapshot with no release asset), the
# build is not an error: this writes the reason to build/versions/NAME/unavailable,
# says it, and exits 0; tests/integration/80-versions.sh reports that version's
# tests as skipped with that reason.
set -eu
name=${1:?usage: build-jemalloc.sh VERSION[-PREFIX_]}
prof=--enable-prof
tls=
case $name in
*-*_) v=${name%-*}; prefix=${name##*-} ;;
*-ie-noprof) v=${name%-ie-noprof}; prefix=; prof=--disable-prof; tls=je_cv_tls_model=yes ;;
*-noprof) v=${name%-noprof}; prefix=; prof=--disable-prof ;;
*) v=$name; prefix= ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${JEMALLOC_SRC:-}" ] && [ -d "$top/../shared/jemalloc" ]; then
	JEMALLOC_SRC=$top/../shared/jemalloc
fi
src=${JEMALLOC_SRC:-}
base=${JEMALLOC_URL:-https://github.com/jemalloc/jemalloc/releases/download}
dest=$top/build/versions/$name
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
#          termux-user-repository tur/libjemalloc/build.sh
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

mkdir -p "$top/build/versions"
# One builder per version at a time (make -j, a second make in parallel).
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
	if ! verified "$asset" 2>/dev/null; then
		command -v curl >/dev/null || unavailable "no curl to fetch $base/$v/jemalloc-$v.tar.bz2"
		mkdir -p "$dl"
		curl -fsSL --retry 2 --connect-timeout 20 --max-time 300 -o "$asset.tmp" \
			"$base/$v/jemalloc-$v.tar.bz2" 2>"$dest/fetch.log" || {
			rm -f "$asset.tmp"
			unavailable "could not fetch $base/$v/jemalloc-$v.tar.bz2 ($(tail -1 "$dest/fetch.log"))${src:+; nor in $src}"
		}
		verified "$asset.tmp" || { rm -f "$asset.tmp"; unavailable "$base/$v/jemalloc-$v.tar.bz2: SHA-256 is not the pinned one"; }
		mv "$asset.tmp" "$asset"
	fi
	tar -xjf "$asset" -C "$dest"
fi
cd "$dest"/jemalloc-*
echo "  JEMALLOC $name"
{
	# The git trees of a mirror have no configure script yet; release assets do.
	[ -x configure ] || autoconf
	# Fixtures are ordinary executables: no reason to keep initial-exec TLS out.
	./configure --prefix="$dest/inst" "$prof" --disable-cxx \
		${prefix:+--with-jemalloc-prefix=$prefix} ${tls:+"$tls"}
	make -j"${JOBS:-2}" build_lib_shared
	make install_lib_shared install_include install_bin
} >"$dest/build.log" 2>&1 || { echo "build-jemalloc.sh: building $name failed; see $dest/build.log" >&2; exit 1; }
touch "$dest/inst/.done"
