#!/usr/bin/env bash
# Re-captures the fixture tree testdata/hybrid from this host (see README.md). Needs root,
# docker, losetup, mkfs.ext4 and the Go toolchain; run from anywhere:
#
#   sudo telemetry/testdata/capture.sh
#
# What it does: builds testdata/busy statically, imports it as an image (no registry), runs it
# in a container limited to 0.5 CPU and 256 MiB (two spinning goroutines, 64 MiB held, 32 MiB
# written with fsync and read back), sets up a loop device over a file with an ext4 file system
# mounted on it, then copies the container's cgroup files (v1 controllers and the
# group's mirror in the unified v2 mount), the host's /proc files, the container process's
# /proc/<pid> files and the /sys links the device resolution follows, twice, one second apart
# (t0, t1). Everything it created is removed on exit, whatever happens.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$here/hybrid
work=$(mktemp -d /var/tmp/boxbench-capture.XXXXXX)
name=boxbench-capture-$$
image=boxbench-test-busy:capture-$$
loopdev=""
mnt=$work/mnt

cleanup() {
	set +e
	docker rm -f "$name" >/dev/null 2>&1
	docker rmi "$image" >/dev/null 2>&1
	mountpoint -q "$mnt" && umount "$mnt"
	[ -n "$loopdev" ] && losetup -d "$loopdev"
	rm -rf "$work"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || { echo "capture.sh: needs root" >&2; exit 1; }

# Image: one static binary and an empty /tmp.
mkdir -p "$work/rootfs/tmp"
(cd "$repo" && CGO_ENABLED=0 go build -o "$work/rootfs/busy" ./telemetry/testdata/busy)
tar -C "$work/rootfs" -c . | docker import -c 'LABEL boxbench=test' -c 'ENTRYPOINT ["/busy"]' - "$image" >/dev/null
# The write-bandwidth rule, far above any real rate, activates blk-throttle on the disk's queue:
# without one, this kernel's v1 blkio counters stay at "Total 0" (see README.md).
disk=/dev/$(basename "$(readlink -f "/sys/dev/block/$(mountpoint -d /var/lib/docker 2>/dev/null || mountpoint -d /)")")
docker run -d --label boxbench=test --name "$name" --cpus 0.5 --memory 256m \
	--device-write-bps "$disk:10gb" "$image" -spin 2 -mem 64 -io 32 -dir /tmp >/dev/null
id=$(docker inspect -f '{{.Id}}' "$name")
pid=$(docker inspect -f '{{.State.Pid}}' "$name")
merged=$(docker inspect -f '{{.GraphDriver.Data.MergedDir}}' "$name")
cg=/docker/$id

# A 64 MiB file attached as a loop device with ext4 on it, mounted, and written to. (This
# host's kernel has no partition-table support, CONFIG_MSDOS_PARTITION and CONFIG_EFI_PARTITION
# unset, so a partitioned loop device cannot be made here; see README.md.)
img=$work/disk.img
truncate -s 64M "$img"
loopdev=$(losetup -f --show "$img")
mkfs.ext4 -q "$loopdev"
mkdir -p "$mnt"
mount "$loopdev" "$mnt"
dd if=/dev/zero of="$mnt/data" bs=1M count=8 oflag=direct status=none

sleep 2 # let the container run into its quota

# copy_dir SRC DST: every readable regular file of SRC (write-only cgroup files are skipped).
copy_dir() {
	mkdir -p "$2"
	local f
	for f in "$1"/*; do
		[ -f "$f" ] || continue
		cat "$f" >"$2/$(basename "$f")" 2>/dev/null || rm -f "$2/$(basename "$f")"
	done
}

# copy_sys_dev MAJ:MIN DST: the /sys/dev/block link, the target's partition file and, for a
# loop device, loop/backing_file, with the same relative layout.
copy_sys_dev() {
	local dev=$1 dst=$2 link target
	link=$(readlink "/sys/dev/block/$dev")
	mkdir -p "$dst/dev/block"
	ln -sfn "$link" "$dst/dev/block/$dev"
	target=$(cd "/sys/dev/block" && cd "$link" && pwd -P)
	mkdir -p "$dst${target#/sys}"
	[ -f "$target/partition" ] && cat "$target/partition" >"$dst${target#/sys}/partition"
	local disk=$target
	[ -f "$target/partition" ] && disk=$(dirname "$target")
	if [ -f "$disk/loop/backing_file" ]; then
		mkdir -p "$dst${disk#/sys}/loop"
		cat "$disk/loop/backing_file" >"$dst${disk#/sys}/loop/backing_file"
	fi
}

capture() {
	local d=$1
	mkdir -p "$d/proc/net" "$d/proc/pressure" "$d/proc/self" "$d/proc/$pid"
	# The cgroup files first, right after the time stamp: the tests compute rates from it.
	date +%s.%N >"$d/time"
	for c in cpu cpuacct cpuset memory blkio unified; do
		copy_dir "/sys/fs/cgroup/$c$cg" "$d/cgroup/$c$cg"
	done
	for f in stat diskstats meminfo loadavg vmstat partitions; do cat "/proc/$f" >"$d/proc/$f"; done
	cat /proc/net/dev >"$d/proc/net/dev"
	cat /proc/self/mountinfo >"$d/proc/self/mountinfo"
	for f in cpu io memory; do
		[ -r "/proc/pressure/$f" ] && cat "/proc/pressure/$f" >"$d/proc/pressure/$f"
	done
	cat "/proc/$pid/stat" >"$d/proc/$pid/stat"
	cat "/proc/$pid/status" >"$d/proc/$pid/status"
	local task
	for task in /proc/$pid/task/*; do
		mkdir -p "$d$task"
		cat "$task/stat" >"$d$task/stat"
		cat "$task/status" >"$d$task/status"
	done
	# Root-level files the readers consult: blk-throttle activity, swap accounting.
	cat /sys/fs/cgroup/blkio/blkio.throttle.io_service_bytes >"$d/cgroup/blkio/blkio.throttle.io_service_bytes"
	[ -f /sys/fs/cgroup/memory/memory.memsw.usage_in_bytes ] &&
		cat /sys/fs/cgroup/memory/memory.memsw.usage_in_bytes >"$d/cgroup/memory/memory.memsw.usage_in_bytes"
	# /sys paths contain ':' (7:0, pci0000:00), which Go module zips do not allow: keep them in
	# a tar that the tests unpack.
	local sys=$work/sys-$(basename "$d")
	copy_sys_dev "$(lsblk -dno MAJ:MIN "$loopdev" | tr -d ' ')" "$sys"
	copy_sys_dev "$(mountpoint -d /)" "$sys"
	tar -C "$sys" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$d/sys.tar" .
}

rm -rf "$out"
mkdir -p "$out"
capture "$out/t0"
sleep 1
capture "$out/t1"

cat >"$out/meta.env" <<EOF
# Written by capture.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ), kernel $(uname -r), cgroup $(stat -fc %T /sys/fs/cgroup/unified) unified mount.
CGROUP_PATH=$cg
PID=$pid
CPUS=0.5
MEMORY_BYTES=268435456
LOOP_DEVICE=$(basename "$loopdev")
LOOP_MOUNT=$mnt
LOOP_BACKING_FILE=$img
ROOT_DEVICE=$(basename "$(readlink -f "/sys/dev/block/$(mountpoint -d /)")")
OVERLAY_MERGED=$merged
EOF
echo "captured into $out"
