#!/bin/sh
# /boxbench-init: pid 1 of the cgroup v2 test bed guest. Mounts only cgroup v2, runs the
# guest test binary, reports on the serial console, powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ip link set lo up
echo "V2BED-UPTIME-START $(cut -d' ' -f1 /proc/uptime)"
echo "V2BED-KERNEL $(uname -r)"
echo "V2BED-CGROUP-MOUNTS $(grep cgroup /proc/mounts | tr '\n' ';')"
echo "V2BED-CONTROLLERS $(cat /sys/fs/cgroup/cgroup.controllers)"
echo "V2BED-SCHEDULER $(cat /sys/block/vda/queue/scheduler)"
echo "V2BED-BEGIN"
cd /v2bed && BOXBENCH_CI=1 BOXBENCH_V2GUEST=1 ./v2test.test -test.v -test.count=1 -test.timeout=6m -test.run 'TestNativeOnV2' 2>&1
rc=$?
echo "V2BED-END"
echo "V2BED-LEFT $(find /sys/fs/cgroup -mindepth 1 -type d | tr '\n' ' ')"
echo "V2BED-UPTIME-END $(cut -d' ' -f1 /proc/uptime)"
echo "V2BED-RESULT rc=$rc"
sync
echo o >/proc/sysrq-trigger
sleep 30
