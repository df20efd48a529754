#!/bin/sh
# host-deps.sh -- the x86_64 host's tools for make check-aarch64: qemu (system and user),
# binfmt registration so arm64 maintainer scripts run in the image build, mmdebstrap, and
# the cross compiler for the syntax check. Installed as root when missing.
set -e
PKGS="qemu-system-arm qemu-user-static binfmt-support mmdebstrap gcc-aarch64-linux-gnu
libc6-dev-arm64-cross linux-libc-dev-arm64-cross e2fsprogs"
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
