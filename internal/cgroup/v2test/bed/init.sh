#!/bin/sh
# /v2bed-init: pid 1 of the cgroup v2 test bed guest, written into a copy of the VM platform's
# guest image (whose own init, /boxbench-init, is left alone). Mounts the kernel's file systems
# and only cgroup v2 (no controller is enabled here: boxbench and dockerd must delegate what they
# need themselves), runs the guest tests named by v2bed.run= on the kernel command line, reports
# on the serial console and powers off.
export PATH=/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ip link set lo up
# boxbench finds its images by the recipe, which names the host's apt sources; the guest's are
# the ones its tree was built from, kept by the rootfs build under another name.
src=/etc/apt/sources.list.d
[ -e $src/debian.sources ] || [ -e /etc/apt/sources.list ] || cp $src/boxbench.sources $src/debian.sources
run=
for a in $(cat /proc/cmdline); do
	case $a in v2bed.run=*) run=${a#v2bed.run=} ;; esac
done
echo "V2BED-UPTIME-START $(cut -d' ' -f1 /proc/uptime)"
echo "V2BED-KERNEL $(uname -r)"
echo "V2BED-CGROUP-MOUNTS $(grep cgroup /proc/mounts | tr '\n' ';')"
echo "V2BED-CONTROLLERS $(cat /sys/fs/cgroup/cgroup.controllers)"
echo "V2BED-SCHEDULER $(cat /sys/block/vda/queue/scheduler)"
echo "V2BED-BEGIN"
cd /v2bed && BOXBENCH_CI=1 BOXBENCH_V2GUEST=1 ./v2test.test -test.v -test.count=1 -test.timeout=8m -test.run "^($run)\$" 2>&1
rc=$?
echo "V2BED-END"
# What the tests started and did not stop (dockerd, containerd) would hold groups: stop it first.
for p in $(pidof dockerd containerd 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
i=0
while pidof dockerd containerd >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "V2BED-LEFT $(find /sys/fs/cgroup -mindepth 1 -type d | tr '\n' ' ')"
echo "V2BED-UPTIME-END $(cut -d' ' -f1 /proc/uptime)"
echo "V2BED-RESULT rc=$rc"
sync
echo o >/proc/sysrq-trigger
sleep 30
