#!/bin/sh
# host-deps.sh -- the x86_64 host's tools for make check-aarch64: qemu (system and user),
# binfmt registration so arm64 maintainer scripts run in the image build, mmdebstrap, and
# the cross compiler for the syntax check. Installed as root when missing.
#
# Recommends are not installed (qemu's would pull in a desktop's worth), so what mmdebstrap
# uses for our image (image.sh: --mode=root, a foreign --arch, our own sources file) is
# named: arch-test (without it mmdebstrap stops at once: "install arch-test for foreign
# architecture support") and mount (without it nothing is mounted in the root, and
# maintainer scripts run without /proc). Its other Recommends serve modes and defaults
# image.sh does not use: fakechroot, fakeroot, uidmap (the other modes), gpg and
# libdistro-info-perl (the default mirror's keyring and security suite).
set -e
PKGS="qemu-system-arm qemu-user-static binfmt-support mmdebstrap arch-test mount
gcc-aarch64-linux-gnu libc6-dev-arm64-cross linux-libc-dev-arm64-cross e2fsprogs"
missing=""
for p in $PKGS; do
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$s" = installed ] || missing="$missing $p"
done
if [ -n "$missing" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "check-aarch64: as root: apt-get install -y$missing" >&2; exit 1; }
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing
fi
# The binfmt handler: mounted and enabled (a container or a fresh VM may have neither).
[ -e /proc/sys/fs/binfmt_misc/status ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64
