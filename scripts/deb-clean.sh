#!/bin/bash
# deb-clean.sh -- `make check-deb`: the package installs on a clean machine and works there.
#
# Usage: scripts/deb-clean.sh BUILD DEB   (as root; network to Debian's archive)
# A clean Debian bookworm root made by mmdebstrap from Debian's archive (the
# apt variant: Essential, apt, nothing else; kept as BUILD/debclean/base.tar,
# DEB_CLEAN_REBUILD=1 makes it again), unpacked afresh for each run.  In it,
# chrooted (with its own /proc, /dev and /sys mounts in a private mount
# namespace, gone with it): `dpkg -i` of the package, which fails for want of
# its dependencies as on any clean machine, `apt-get -f install` to fetch
# them, then the installed tool: --version, `PID get stats.allocated` on a
# fixture (jemfix, with Debian's libjemalloc2 installed for it) against the
# fixture's own figure, and `systemd-analyze verify` of the unit (systemd
# installed for it).  Prints each step's time.
set -euo pipefail
BUILD=$1
DEB=$2
DIR=$BUILD/debclean
BASE=$DIR/base.tar
FIX=$BUILD/fixtures/jemfix
MIRROR=${DEB_CLEAN_MIRROR:-http://deb.debian.org/debian}

[ "$(id -u)" = 0 ] || { echo "deb-clean: needs root (chroot, mounts)" >&2; exit 2; }
command -v mmdebstrap >/dev/null || { echo "deb-clean: needs mmdebstrap: apt-get install mmdebstrap" >&2; exit 2; }
[ -f "$DEB" ] || { echo "deb-clean: no package $DEB (make deb)" >&2; exit 2; }
[ -x "$FIX" ] || { echo "deb-clean: no fixture $FIX (make)" >&2; exit 2; }
mkdir -p "$DIR"
t0=$(date +%s)
step() { echo "deb-clean: [$(($(date +%s) - t0)) s] $*"; }

if [ ! -f "$BASE" ] || [ -n "${DEB_CLEAN_REBUILD:-}" ]; then
	step "mmdebstrap bookworm (apt variant) from $MIRROR"
	mmdebstrap --quiet --mode=root --variant=apt bookworm "$BASE.tmp" "$MIRROR"
	mv "$BASE.tmp" "$BASE"
fi
ROOT=$(mktemp -d "$DIR/root.XXXXXX")
trap 'rm -rf --one-file-system "$ROOT"' EXIT
tar -C "$ROOT" -xf "$BASE"
cp "$DEB" "$ROOT/tmp/jemattach.deb"
cp "$FIX" "$ROOT/tmp/jemfix"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
step "clean root unpacked in $ROOT ($(du -sm "$ROOT" | cut -f1) MB)"

cat >"$ROOT/tmp/inside.sh" <<'EOF'
set -eu
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
t0=$1
step() { echo "deb-clean: [$(($(date +%s) - t0)) s] $*"; }
command -v jemattach >/dev/null && { echo "deb-clean: jemattach already there" >&2; exit 1; }
apt-get update -qq
step "dpkg -i (its dependencies are missing on a clean machine)"
dpkg -i /tmp/jemattach.deb >/tmp/dpkg.log 2>&1 || grep -E 'depends on|dependency problems' /tmp/dpkg.log | head -20
step "apt-get -f install: the dependencies from Debian's archive"
apt-get -f install -y -qq --no-install-recommends >/tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log; exit 1; }
[ "$(dpkg-query -W -f='${Status}' jemattach)" = "install ok installed" ]
echo "deb-clean: installed: $(dpkg-query -W -f='${Package} ${Version} (${Installed-Size} KiB); Depends: ${Depends}' jemattach)"
jemattach --version
step "the fixture's allocator and systemd-analyze (not the package's dependencies)"
apt-get install -y -qq --no-install-recommends libjemalloc2 systemd >/tmp/apt2.log 2>&1 || { tail -20 /tmp/apt2.log; exit 1; }
mkdir -p /tmp/fix && cd /tmp/fix && mkfifo in out
/tmp/jemfix <in >out &
pid=$!
exec 3>in 4<out
read -r line <&4
[ "$line" = ready ] || { echo "deb-clean: the fixture did not start" >&2; exit 1; }
echo "alloc 100 10000" >&3; read -r line <&4
theirs=$(jemattach "$pid" get stats.allocated)
echo "get z stats.allocated" >&3; read -r own <&4
echo "deb-clean: jemattach $pid get stats.allocated: $theirs; the fixture's own: $own"
# A moment apart in an idle process: within 1% (its own read allocates a little).
[ "$theirs" -gt 1000000 ] && [ $((theirs > own ? theirs - own : own - theirs)) -le $((own / 100)) ] ||
	{ echo "deb-clean: they differ" >&2; exit 1; }
echo "ping" >&3; read -r line <&4
[ "$line" = pong ] || { echo "deb-clean: the fixture did not answer after" >&2; exit 1; }
echo exit >&3
wait "$pid" || true
step "systemd-analyze verify /lib/systemd/system/jemattach-serve.service"
out=$(systemd-analyze verify --man=no /lib/systemd/system/jemattach-serve.service 2>&1) &&
	[ -z "$out" ] || { echo "deb-clean: systemd-analyze verify: $out" >&2; exit 1; }
step "all passed"
EOF

unshare --mount --propagation private --fork -- /bin/sh -c '
	set -e
	mount -t proc proc "$1/proc"
	mount --rbind /dev "$1/dev"
	mount -t sysfs sysfs "$1/sys"
	chroot "$1" /bin/sh /tmp/inside.sh "$2"' sh "$ROOT" "$t0"
step "done"
