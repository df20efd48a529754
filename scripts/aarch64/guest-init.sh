#!/bin/sh
# guest-init.sh -- PID 1 of the arm64 guest (installed as /sbin/jm-init by image.sh): mounts
# what a test needs, runs the host's job from the shared directory, reports, powers off.
#
# Two 9p shares: jmsrc, the source tree (read-only), and jmout, where the host left `job`
# and reads back `log` and `rc`. No systemd: under TCG every second of boot counts.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
# mount is not Essential in bookworm: klibc's (initramfs-tools needs it) when it is missing.
command -v mount > /dev/null || PATH=$PATH:/usr/lib/klibc/bin
export PATH HOME=/root LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -o remount,rw /
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
hostname jm-arm64
ip link set lo up
modprobe 9pnet_virtio
mkdir -p /mnt/src /mnt/out
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288 jmsrc /mnt/src
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 jmout /mnt/out
# An image whose package configuration was cut short (image.sh --fast) finishes it here.
if [ -n "$(dpkg --audit 2>/dev/null)" ]; then
	echo "JM-GUEST: configuring packages (first boot)"
	t0=$(date +%s)
	DEBIAN_FRONTEND=noninteractive dpkg --configure -a > /var/log/jm-dpkg.log 2>&1 ||
		tail -20 /var/log/jm-dpkg.log
	echo "JM-GUEST: packages configured in $(( $(date +%s) - t0 )) s"
fi
# The test's ptrace and perf needs, as on the x86_64 host (root: yama and paranoid allow it).
echo "JM-GUEST-UP $(uname -m) $(nproc) cpus, $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB"
echo "JM-GUEST-CPU $(grep -m1 Features /proc/cpuinfo)"
if [ -f /mnt/out/job ]; then
	sh /mnt/out/job > /mnt/out/log 2>&1 < /dev/null &
	pid=$!
	# The log to the serial console as it grows, for the host to watch.
	tail -n +1 -f /mnt/out/log --pid=$pid 2>/dev/null
	wait $pid
	echo $? > /mnt/out/rc
else
	echo "no /mnt/out/job" > /mnt/out/log
	echo 2 > /mnt/out/rc
fi
echo "JM-GUEST-DONE rc=$(cat /mnt/out/rc)"
sync
umount /mnt/out 2>/dev/null
echo o > /proc/sysrq-trigger
sleep 60
