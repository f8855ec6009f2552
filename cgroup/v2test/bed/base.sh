#!/usr/bin/env bash
# Builds the cgroup v2 test bed's base: a copy of a cached root filesystem tree with Debian's
# kernel installed in it (apt in a chroot, in a private mount namespace), turned into an ext4
# image with mkfs.ext4 -d (no loop mount), plus the kernel and initrd to boot it with.
#   base.sh ROOTFS OUT
# ROOTFS is only read (cp -a). The guest also gets iproute2 to bring its loopback up. OUT gets vmlinuz, initrd.img, base.img, kernel.txt; it is built in
# OUT.tmp and renamed, so a half-built base is never used.
set -euo pipefail
src=$1 out=$2
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
  tree=$1
  mount -t proc proc "$tree/proc"
  mount --rbind /dev "$tree/dev"
  chroot "$tree" sh -euc "
    export DEBIAN_FRONTEND=noninteractive
    apt-get -q update >/dev/null
    apt-get install -y -q --no-install-recommends linux-image-amd64 initramfs-tools zstd iproute2 >/dev/null
    apt-get clean
    rm -rf /var/lib/apt/lists/*
  "
' sh "$tree"
rm -f "$tree/usr/sbin/policy-rc.d"
k=$(ls "$tree"/boot/vmlinuz-* | head -1)
i=$(ls "$tree"/boot/initrd.img-* | head -1)
cp "$k" "$tmp/vmlinuz"
cp "$i" "$tmp/initrd.img"
basename "$k" | sed 's/^vmlinuz-//' >"$tmp/kernel.txt"
rm -rf "$tree"/boot/* "$tree"/var/cache/apt/archives/*.deb
printf 'nameserver 127.0.0.1\n' >"$tree/etc/resolv.conf"
# The image gets room for the test's data directory and binary.
size=$(( $(du -sm "$tree" | cut -f1) + 512 ))
mkfs.ext4 -q -F -L v2bed -d "$tree" "$tmp/base.img" "${size}M"
rm -rf "$tree"
trap - EXIT
rm -rf "$out"
mv "$tmp" "$out"
