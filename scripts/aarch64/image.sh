#!/bin/sh
# image.sh -- the Debian bookworm arm64 system make check-aarch64 boots, built once from Debian
# packages and cached: $OUT/rootfs.img (ext4), $OUT/vmlinuz, $OUT/initrd.img.
# Usage: scripts/aarch64/image.sh [OUT]   (default build/aarch64; as root). Built when missing;
# an image older than this script or scripts/deps.sh is used all the same, with a notice (a
# rebuild takes 20 minutes or more): AARCH64_REBUILD=1 or rm -rf OUT rebuilds it.
#
# mmdebstrap runs the arm64 packages' maintainer scripts through qemu-user (binfmt), so the
# image is complete before its first boot; the guest's init is scripts/aarch64/guest-init.sh.
set -eu
OUT=${1:-build/aarch64}
here=$(dirname "$0")
img=$OUT/rootfs.img
if [ -f "$img" ] && [ -z "${AARCH64_REBUILD:-}" ]; then
	[ "$img" -nt "$0" ] && [ "$img" -nt "$here/../deps.sh" ] ||
		echo "image: $img is older than image.sh or deps.sh; AARCH64_REBUILD=1 to rebuild it" >&2
	exit 0
fi
"$here/host-deps.sh"
# The guest installs what scripts/deps.sh lists (the same build and test tools), and a kernel.
pkgs=$(sed -n '/^PKGS="/,/"$/p' "$here/../deps.sh" | sed 's/^PKGS="//; s/"$//' | tr '\n' ' ')
extra="linux-image-arm64 initramfs-tools kmod mount rsync procps iproute2 ca-certificates"
inc=$(echo "$pkgs $extra" | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
t0=$(date +%s)
rm -rf "$OUT/rootfs" "$img.tmp"
mkdir -p "$OUT"
# The host's own apt sources (deb822 file) are pasted into the guest: the same archive.
src=/etc/apt/sources.list.d/debian.sources
[ -f "$src" ] || src=/etc/apt/sources.list
echo "image: mmdebstrap bookworm arm64 into $OUT/rootfs (slow: maintainer scripts under qemu-user)"
# Before the kernel is installed: its initramfs with only the modules this guest boots with
# (MODULES=most under qemu-user takes some 20 minutes); conf.d and hooks/ are no package's
# conffiles. And redis-server's postinst wants to start its service: policy-rc.d says no.
mmdebstrap --mode=root --arch=arm64 --variant=apt --include="$inc" \
	--essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/etc/initramfs-tools/hooks"' \
	--essential-hook='echo MODULES=list > "$1/etc/initramfs-tools/conf.d/jm-guest"' \
	--essential-hook='printf "#!/bin/sh\n[ \"\$1\" = prereqs ] && exit 0\n. /usr/share/initramfs-tools/hook-functions\nmanual_add_modules virtio_pci virtio_blk virtio_mmio ext4 crc32c_generic\n" > "$1/etc/initramfs-tools/hooks/jm-guest"; chmod 755 "$1/etc/initramfs-tools/hooks/jm-guest"' \
	--essential-hook='printf "#!/bin/sh\nexit 101\n" > "$1/usr/sbin/policy-rc.d"; chmod 755 "$1/usr/sbin/policy-rc.d"' \
	bookworm "$OUT/rootfs" "$src"
cp "$here/guest-init.sh" "$OUT/rootfs/sbin/jm-init"
chmod 755 "$OUT/rootfs/sbin/jm-init"
echo jm-arm64 > "$OUT/rootfs/etc/hostname"
echo "127.0.0.1 localhost jm-arm64" > "$OUT/rootfs/etc/hosts"
cp -L "$OUT/rootfs/vmlinuz" "$OUT/vmlinuz"
cp -L "$OUT/rootfs/initrd.img" "$OUT/initrd.img"
# 8 GiB, sparse: room for the build, profiles and cores.
truncate -s 8G "$img.tmp"
mke2fs -q -t ext4 -L jmroot -d "$OUT/rootfs" "$img.tmp"
rm -rf "$OUT/rootfs"
mv "$img.tmp" "$img"
echo "image: built in $(( $(date +%s) - t0 )) s: $img"
