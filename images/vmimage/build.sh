#!/usr/bin/env bash
# Builds a guest base for the VM platform from a cached root filesystem tree:
#   build.sh ROOTFS GUESTFILES OUT [docker]
# With "docker" the guest also gets Debian's docker.io (dockerd, containerd, runc) and room for
# the database's image, which vmimage loads into it in a first boot.
# A copy of ROOTFS (only read, cp -a) gets Debian's kernel and what the guest needs (the QEMU
# guest agent as the host's channel, tini as pid 1's reaper, iproute2, kmod) with apt in a
# chroot in a private mount namespace; GUESTFILES (boxbench's init and helpers) are copied to
# / of the guest. The tree becomes an ext4 image with mkfs.ext4 -d (no loop mount); the kernel
# and initrd are taken out beside it. OUT gets vmlinuz, initrd.img, disk.img, kernel.txt,
# packages.txt; it is built in OUT.tmp and renamed, so a half-built base is never used.
set -euo pipefail
src=$1 files=$2 out=$3 variant=${4:-}
extra=
if [ "$variant" = docker ]; then
	extra="docker.io"
fi
tmp=$out.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/tree
cp -a "$src" "$tree"
cp /etc/resolv.conf "$tree/etc/resolv.conf"
# No daemon may start in the chroot; initramfs-tools builds the initrd (MODULES=most:
# virtio_blk and ext4 are modules in Debian's kernel).
printf '#!/bin/sh\nexit 101\n' >"$tree/usr/sbin/policy-rc.d"
chmod +x "$tree/usr/sbin/policy-rc.d"
unshare -m --propagation private sh -euc '
  tree=$1 extra=$2
  mount -t proc proc "$tree/proc"
  mount --rbind /dev "$tree/dev"
  chroot "$tree" sh -euc "
    export DEBIAN_FRONTEND=noninteractive
    apt-get -q update >/dev/null
    apt-get install -y -q --no-install-recommends linux-image-amd64 initramfs-tools zstd iproute2 kmod qemu-guest-agent tini $extra >/dev/null
    apt-get clean
    rm -rf /var/lib/apt/lists/*
  "
' sh "$tree" "$extra"
rm -f "$tree/usr/sbin/policy-rc.d"
k=$(ls "$tree"/boot/vmlinuz-* | head -1)
i=$(ls "$tree"/boot/initrd.img-* | head -1)
cp "$k" "$tmp/vmlinuz"
cp "$i" "$tmp/initrd.img"
basename "$k" | sed 's/^vmlinuz-//' >"$tmp/kernel.txt"
chroot "$tree" dpkg-query -W -f '${Package}=${Version}\n' linux-image-amd64 qemu-guest-agent tini $extra >"$tmp/packages.txt"
rm -rf "$tree"/boot/* "$tree"/var/cache/apt/archives/*.deb
printf 'nameserver 127.0.0.1\n' >"$tree/etc/resolv.conf"
cp -r "$files"/. "$tree/"
chmod 0755 "$tree/boxbench-init" "$tree/boxbench-prepare" "$tree"/usr/local/sbin/boxbench-*
mkdir -p "$tree/boxbench/data" "$tree/boxbench/run" "$tree/mnt/xfer"
# The root disk gets room for a data directory on the guest's own tree (storage rootfs).
size=$(( $(du -sm "$tree" | cut -f1) + 1024 ))
if [ "$variant" = docker ]; then
	size=$(( size + $(du -sm "$src" | cut -f1) * 2 + 512 )) # the image's layer, and its import
fi
mkfs.ext4 -q -F -L bbroot -d "$tree" "$tmp/disk.img" "${size}M"
rm -rf "$tree"
trap - EXIT
rm -rf "$out"
mv "$tmp" "$out"
