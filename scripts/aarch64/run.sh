#!/bin/sh
# run.sh -- make check-aarch64: boot the Debian bookworm arm64 guest (image.sh) under
# qemu-system-aarch64 (TCG, -cpu max: SVE, pointer authentication, BTI), build jemattach
# natively in it and run integration tests against Debian's arm64 libjemalloc2 and redis-server.
#
# Environment: TESTS (a run-integration.sh pattern, default 10-basic; "all" for every file),
# then scripts/aarch64/smoke.sh (every main command on Debian's redis-server); or JOB (a shell
# command run in the guest's copy of the tree, built, instead of both),
# ONLY (run only the tests whose names contain it), AARCH64_OUT (default build/aarch64), AARCH64_TIMEOUT (seconds, default 7200),
# JEMALLOC: "prof" (the default) runs the tests, Redis included, with jemalloc 5.3.0 built with
# profiling (jemalloc-prof.sh, through LD_LIBRARY_PATH: Debian's arm64 one has none);
# "debian" with Debian's libjemalloc2 alone.
# .deb files in $AARCH64_OUT/out/debs are installed first (packages added since the image).
# The guest's build tree stays in the image between runs: later runs rebuild what changed.
# Prints the guest's output; exits with the guest job's status.
set -eu
OUT=${AARCH64_OUT:-build/aarch64}
here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$here/../.." && pwd)
t0=$(date +%s)
"$here/image.sh" "$OUT"
[ "${JEMALLOC:-prof}" = debian ] || "$here/jemalloc-prof.sh" "$OUT"
t1=$(date +%s)
mkdir -p "$OUT/out"
rm -f "$OUT/out/log" "$OUT/out/rc" "$OUT/out/job"
tests=${TESTS:-10-basic}
[ "$tests" = all ] && tests=
# The tree is copied (not built over 9p): the guest's build/ must not be the host's.
cat > "$OUT/out/job" <<JOB
set -e
t0=\$(date +%s)
mkdir -p /root/jm
# What rsync copied is touched: it keeps the host's mtimes, and a file edited on the host while
# a guest built its previous version would otherwise look older than that build's object.
rsync -ai --delete --exclude=/build --exclude=/.git /mnt/src/ /root/jm/ | sed -n 's/^>f[^ ]* //p' > /root/copied
(cd /root/jm && xargs -r -d '\n' touch < /root/copied)
cd /root/jm
# Packages added by hand since the image was built (no network in the guest).
if ls /mnt/out/debs/*.deb > /dev/null 2>&1; then dpkg -i /mnt/out/debs/*.deb > /root/debs.log 2>&1 || tail /root/debs.log; fi
echo "JM: copied the tree in \$(( \$(date +%s) - t0 )) s"
make -j\$(nproc) UNWIND=shared all >/root/make.log 2>&1 || { tail -50 /root/make.log; exit 1; }
echo "JM: built in \$(( \$(date +%s) - t0 )) s"
export JEMATTACH=build/jemattach FIXTURES=build/fixtures
JOB
# ONLY (tests/lib.sh: only the tests whose names contain it) reaches the guest's tests.
[ -z "${ONLY:-}" ] || printf "export ONLY='%s'\n" "$ONLY" >> "$OUT/out/job"
if [ "${JEMALLOC:-prof}" != debian ] && [ -f "$OUT/out/jemalloc-prof/.done" ]; then
	cat >> "$OUT/out/job" <<'JOB'
rm -rf /opt/jemalloc-prof && cp -a /mnt/out/jemalloc-prof/opt/jemalloc-prof /opt/
export LD_LIBRARY_PATH=/opt/jemalloc-prof/lib PATH=/opt/jemalloc-prof/bin:$PATH
echo "JM: jemalloc with profiling: /opt/jemalloc-prof (LD_LIBRARY_PATH)"
JOB
fi
if [ -n "${JOB:-}" ]; then
	echo "$JOB" >> "$OUT/out/job"
else
	# The smoke test runs even when a test file failed: both say what works.
	printf 'r=0\ntests/run-integration.sh "%s" || r=1\nscripts/aarch64/smoke.sh || r=1\nexit $r\n' \
		"$tests" >> "$OUT/out/job"
fi
echo "check-aarch64: booting the arm64 guest (image ready in $((t1 - t0)) s)"
set +e
timeout "${AARCH64_TIMEOUT:-7200}" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 4G \
	-nographic -no-reboot -nic none \
	-kernel "$OUT/vmlinuz" -initrd "$OUT/initrd.img" \
	-append "root=/dev/vda rw console=ttyAMA0 init=/sbin/jm-init quiet loglevel=3" \
	-drive file="$OUT/rootfs.img",format=raw,if=virtio,cache=writeback \
	-fsdev local,id=jmsrc,path="$tree",security_model=none,readonly=on \
	-device virtio-9p-pci,fsdev=jmsrc,mount_tag=jmsrc \
	-fsdev local,id=jmout,path="$(cd "$OUT/out" && pwd)",security_model=none \
	-device virtio-9p-pci,fsdev=jmout,mount_tag=jmout \
	< /dev/null > "$OUT/console.log" 2>&1
qrc=$?
set -e
t2=$(date +%s)
if [ -f "$OUT/out/log" ]; then cat "$OUT/out/log"; else tail -40 "$OUT/console.log"; fi
rc=$(cat "$OUT/out/rc" 2>/dev/null || echo 99)
echo "check-aarch64: guest ran $((t2 - t1)) s (qemu status $qrc, job status $rc); total $((t2 - t0)) s"
exit "$rc"
