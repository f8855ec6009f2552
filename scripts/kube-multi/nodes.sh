# shellcheck shell=bash
# Nodes as namespaces of this host, for scripts/kube-multi.sh (sourced; uses its variables and
# kube-local.sh's functions).
#
# Why namespaces and not containers (kind's way): every component already exists on this host
# (the Kubernetes binary kube-local.sh builds, Debian's containerd, runc, etcd and CNI plugins),
# so a node needs no image, no nested containerd inside a container, no /dev/kmsg or cgroup
# mounts faked for it, and no nested overlayfs (each node's containerd keeps its snapshots on the
# host's ext4). What a node must not share, it gets from a namespace or a flag: its network
# (its own interfaces, routes, iptables and ports), its mount table (private /var/lib/kubelet and
# the other fixed paths), its hostname, its containerd (root, state, socket) and its kubelet's
# cgroupRoot. What it shares, like kind's nodes do, is the kernel, its tunables and the cgroup
# tree.

node_name() { echo "$NODE_PREFIX$1"; }
node_addr() { echo "$NET_PREFIX.$((10 + $1))"; }
node_dir() { echo "$STATE/n$1"; }
node_sock() { echo "$RUN/n$1/containerd.sock"; }

# nsx I CMD...: run CMD inside node I's network, mount and UTS namespaces (exec, same PID).
nsx() {
  local i=$1
  shift
  nsenter --net="$NSDIR/n$i.net" --mount="$NSDIR/n$i.mnt" --uts="$NSDIR/n$i.uts" -- "$@"
}

node_exists() { [ -f "$NSDIR/n$1.net" ] && nsenter --net="$NSDIR/n$1.net" true 2>/dev/null; }

# The number of nodes of the cluster that is up (0 if none).
nodes_up() { cat "$STATE/nodes" 2>/dev/null || echo 0; }

# Host side: the bridge, a private directory for the namespace files, the FORWARD rule. With
# br_netfilter on (dockerd and kube-local.sh turn it on), frames between two ports of a bridge
# cross the host's FORWARD chain, whose policy dockerd sets to DROP.
make_host_net() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$NET_PREFIX.1/24" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  iptables -C FORWARD -i "$BRIDGE" -o "$BRIDGE" -m comment --comment "$FW_COMMENT" -j ACCEPT 2>/dev/null ||
    iptables -I FORWARD 1 -i "$BRIDGE" -o "$BRIDGE" -m comment --comment "$FW_COMMENT" -j ACCEPT
  mkdir -p "$NSDIR"
  # unshare --mount=FILE needs FILE on a mount with private propagation.
  if ! findmnt -rn --mountpoint "$NSDIR" >/dev/null; then
    mount --bind "$NSDIR" "$NSDIR"
    mount --make-private "$NSDIR"
  fi
}

# make_node I: node I's namespaces, its veth on the bridge, its address, its private directories.
make_node() {
  local i=$1 d name addr p
  d=$(node_dir "$i")
  name=$(node_name "$i")
  addr=$(node_addr "$i")
  node_exists "$i" && return 0
  for p in "${NODE_DIRS[@]}"; do
    mkdir -p "$d/fs$p"
  done
  mkdir -p "$RUN/n$i"
  touch "$NSDIR/n$i.net" "$NSDIR/n$i.mnt" "$NSDIR/n$i.uts"
  # Inside: its hostname; its own copies of the fixed paths; and no view of the other nodes'
  # namespace files (a copy of that mount would keep their namespaces alive).
  # shellcheck disable=SC2016
  unshare --net="$NSDIR/n$i.net" --mount="$NSDIR/n$i.mnt" --uts="$NSDIR/n$i.uts" --propagation slave \
    bash -euc 'hostname "$1"; umount -l "$2"; d=$3; shift 3
               for p in "$@"; do mount --bind "$d/fs$p" "$p"; done' \
    kube-multi "$name" "$NSDIR" "$d" "${NODE_DIRS[@]}"
  ip link add "${VETH_PREFIX:-bbm}$i" type veth peer name eth0 netns "$NSDIR/n$i.net"
  ip link set "${VETH_PREFIX:-bbm}$i" master "$BRIDGE" up
  nsx "$i" bash -euc '
    ip link set lo up
    ip addr add "$1/24" dev eth0
    ip link set eth0 up
    ip route add default via "$2"
    # Nodes route pod traffic (a fresh namespace starts with forwarding off).
    sysctl -qw net.ipv4.ip_forward=1
    sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
    # bridge-nf for a bridge inside the node (flannel): kube-proxy expects it.
    sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true' kube-multi "$addr" "$NET_PREFIX.1"
  log "node $name: namespaces, address $addr on $BRIDGE"
}

# The paths of NODE_DIRS that do not exist on the host are made (empty mount points) and recorded.
# The record is kept in $HOST_SAVED when the caller shares the host directories between instances;
# a later instance's path that is still absent (/run/cilium under --cni cilium) is added to it:
# nothing of ours made it, so the last one down removes it.
save_node_dirs() {
  local f=${HOST_SAVED:-$STATE}/hostdirs.absent p top
  touch "$f"
  for p in "${NODE_DIRS[@]}"; do
    # The topmost missing directory, which down removes (if empty) with everything under it.
    top=$p
    while [ ! -e "$(dirname "$top")" ]; do top=$(dirname "$top"); done
    [ -e "$p" ] || echo "$top"
  done | sort -u - "$f" >"$f.tmp"
  mv "$f.tmp" "$f"
  for p in "${NODE_DIRS[@]}"; do mkdir -p "$p"; done
}

restore_node_dirs() {
  local d f=${HOST_SAVED:-$STATE}/hostdirs.absent
  [ -f "$f" ] || return 0
  while IFS= read -r d; do
    [ -d "$d" ] || continue
    find "$d" -depth -type d -empty -delete 2>/dev/null || true
    [ -e "$d" ] && log "$d was created for the nodes but is not empty now; left in place"
  done <"$f"
  return 0
}

# end_nodes: kills what is left of the nodes' processes (our_pids; three tries a second apart)
# and unmounts the namespace files under $NSDIR and $NSDIR itself, so that the namespaces go
# with their last process. The first step of a teardown once the components were asked to stop;
# does nothing when no node is up.
end_nodes() {
  local t p f
  for ((t = 0; t < 3; t++)); do
    p=$(our_pids)
    [ -z "$p" ] && break
    log "ending leftover processes: $(echo $p)"
    # shellcheck disable=SC2086
    kill -KILL $p 2>/dev/null || true
    sleep 1
  done
  if [ -d "$NSDIR" ]; then
    for f in "$NSDIR"/*; do
      [ -e "$f" ] || continue
      umount "$f" 2>/dev/null || true
    done
    if findmnt -rn --mountpoint "$NSDIR" >/dev/null; then umount "$NSDIR"; fi
  fi
}

# Every process of this cluster: those in a node's network or mount namespace, and those in a
# cgroup under $CGROUP_BASE (containers of pods, in namespaces of their own). Prints PIDs. One
# pass over /proc (a subprocess per process would take minutes on a loaded 2-vCPU host).
our_pids() {
  local i want=
  for ((i = 1; i <= MAX_NODES; i++)); do
    [ -f "$NSDIR/n$i.net" ] || continue
    want="$want net:[$(stat -L -c %i "$NSDIR/n$i.net" 2>/dev/null)] mnt:[$(stat -L -c %i "$NSDIR/n$i.mnt" 2>/dev/null)]"
  done
  {
    [ -z "$want" ] || find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/*' \( -name net -o -name mnt \) \
      -printf '%l %p\n' 2>/dev/null | awk -v want="$want" '
        BEGIN { n = split(want, w, " "); for (k = 1; k <= n; k++) ours[w[k]] = 1 }
        $1 in ours { split($2, a, "/"); print a[3] }'
    grep -l ":$CGROUP_BASE/" /proc/[0-9]*/cgroup 2>/dev/null | cut -d/ -f3
  } | grep -vx "$$" | sort -un
  return 0
}
