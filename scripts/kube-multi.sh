#!/usr/bin/env bash
# A real multi-node Kubernetes cluster on this one host, for boxbench's tests of topologies across
# nodes and for comparing CNIs. See docs/kubernetes.md ("The multi-node local cluster").
#
#   scripts/kube-multi.sh up [--nodes N] [--cni routes|vxlan|cilium]   build what is missing, start, wait
#   scripts/kube-multi.sh status     exit 0 iff every component runs and every node is Ready
#   scripts/kube-multi.sh down       stop everything it started, remove everything it created
#   scripts/kube-multi.sh load TAR   import an image archive (`docker save` format) into every node
#   scripts/kube-multi.sh build [cilium]   build (or find cached) everything up needs, for routes and
#                                    vxlan (and cilium, named: a long build CI does not make)
#   … --name NAME                    any of them on instance NAME instead of the default one
#
# Each node is a set of namespaces of this host (network, mount, UTS) with its own address on a
# bridge this script creates, its own containerd and kubelet and kube-proxy, and private
# /var/lib/kubelet, /var/lib/cni, /etc/cni/net.d and pod logs (bind mounts inside its mount
# namespace). Node 1 also runs the control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler). The Kubernetes binary and the pause image are scripts/kube-local.sh's (same
# release, same cache); CoreDNS and flannel are built here (scripts/kube-multi/).
#
# It shares nothing with the single-node cluster of scripts/kube-local.sh, which may run beside
# it: other directories, bridge, addresses, cgroup root, lock; its ports are inside its nodes'
# network namespaces. Everything lives under /var/lib/boxbench/multi, /run/boxbench/multi and
# /var/log/boxbench-multi, the bridge bbmulti0 and its veths bbm<N>, the cgroup subtree
# /boxbench-multi, one iptables rule on the host (FORWARD, commented "boxbench-multi") and the
# kernel tunables the kubelet sets (saved before the first up, restored by down). That is the
# default instance; instance NAME (--name) has "-NAME" in each of these names and addresses of its
# own (below), so several run at once.
set -euo pipefail

MULTI_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Functions only (kube-local.sh returns before doing anything when sourced): the build of the
# Kubernetes binary and the pause image, pidfile-based process control, certificates.
# shellcheck source=kube-local.sh
source "$MULTI_HERE/kube-local.sh"
HERE=$MULTI_HERE SRC=$MULTI_HERE/kube-local   # kube-local.sh took them from $0

# ---- the contract other code relies on (docs/kubernetes.md) ------------------------------------
# Several clusters run at once, each an instance with a name (--name; NAME= for make). The
# default instance (no name) keeps the names below; instance N has its own directories, bridge,
# veths, node names, context, cgroup root and lock, all with "-N" in them, and its own address
# range: a slot k (1..15) allocated at its first up and kept in $STATE/slot, giving the node
# network 10.250.k.0/24 and the pod network 10.245.(16k).0/20 (the default instance is slot 0).
# Nothing a node listens on is on the host (its ports are in its network namespace), and the
# service network is the same in every instance for the same reason.
MAX_SLOTS=15
instance() {
  NAME=$1
  local sfx=${NAME:+-$NAME}
  STATE=/var/lib/boxbench/multi$sfx
  RUN=/run/boxbench/multi$sfx
  LOGS=/var/log/boxbench-multi$sfx
  KUBECONFIG_ADMIN=$STATE/admin.kubeconfig
  CONTEXT=boxbench-multi$sfx
  NODE_PREFIX=bbmulti$sfx-      # node names: bbmulti-1 … bbmulti-N (bbmulti-NAME-1 … in an instance)
  BRIDGE=bbmulti${NAME:+-$NAME}   # bbmulti-NAME: at most 14 characters (an interface name's limit is 15)
  [ -n "$NAME" ] || BRIDGE=bbmulti0
  VETH_PREFIX=bbm${NAME:+-$NAME-}   # node i's host-side veth: bbm<i>, or bbm-NAME-<i>
  CGROUP_BASE=/boxbench-multi$sfx   # node i's kubelet cgroupRoot is $CGROUP_BASE/n<i>
  CNI_NET_NAME=boxbench-multi$sfx
  FW_COMMENT=boxbench-multi$sfx
  LOCK=$CACHE/kube-multi$sfx.lock
  PIDS=$RUN/pids
  PKI=$STATE/pki
  BIN=$RUN/bin
  NSDIR=$RUN/ns                 # the nodes' namespace files (a private bind mount of its own)
  CNI_BIN=$RUN/cni-bin          # Debian's CNI plugins plus flannel's, for every node's containerd
  local k=0
  [ -z "$NAME" ] || k=$(cat "$STATE/slot" 2>/dev/null || echo 0)   # allocated by up (new_slot)
  slot "$k"
}

# slot K: the addresses of slot K.
slot() {
  SLOT=$1
  NET_PREFIX=10.250.$SLOT             # the bridge is .1, node i is .(10+i)
  POD_CIDR=10.245.$((SLOT * 16)).0/20   # --cluster-cidr; each node gets a /24 of it
}

# valid_name NAME: an instance name reaches paths, interface names and cgroups.
valid_name() { [[ $1 =~ ^[a-z][a-z0-9]{0,5}$ ]]; }

# The instances that are up (their state directories), this one included.
instances_up() {
  local f
  for f in /var/lib/boxbench/multi/nodes /var/lib/boxbench/multi-*/nodes; do
    [ -f "$f" ] && dirname "$f"
  done
  return 0
}

# new_slot: the lowest slot no other instance holds and whose node network the host does not
# already route (a bridge of someone else's), recorded in $STATE/slot. Under $HOST_LOCK.
new_slot() {
  local k d used=" "
  [ -n "$NAME" ] || return 0
  [ ! -f "$STATE/slot" ] || return 0
  for d in /var/lib/boxbench/multi-*; do
    [ "$d" != "$STATE" ] && [ -f "$d/slot" ] && used="$used$(cat "$d/slot") "
  done
  for ((k = 1; k <= MAX_SLOTS; k++)); do
    [[ $used == *" $k "* ]] && continue
    [ -z "$(ip -4 route show "10.250.$k.0/24")" ] || continue
    mkdir -p "$STATE"
    echo "$k" >"$STATE/slot"
    slot "$k"
    return 0
  done
  die "no free address slot for instance '$NAME': $MAX_SLOTS instances hold 10.250.1-$MAX_SLOTS.0/24 (see /var/lib/boxbench/multi-*/slot)"
}

SERVICE_CIDR=10.97.0.0/16
SERVICE_API_IP=10.97.0.1
DNS_IP=10.97.0.10             # the kube-dns Service (CoreDNS)
MAX_NODES=9
# What the instances share, because the host has one of each: the kernel tunables the kubelets
# set and the host directories the nodes bind their own over. The first instance up saves them,
# the last one down restores them, under this lock.
HOST_SAVED=/var/lib/boxbench/kube-multi-host
HOST_LOCK=$CACHE/kube-multi-host.lock
instance ""

SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
         kernel.keys.root_maxkeys kernel.keys.root_maxbytes fs.inotify.max_user_instances)
# Each node's kubelet and containerd hold about 7 inotify instances, all of the user root, whose
# default limit is 128: three 4-node instances beside the host's own users passed it here
# ("inotify_init: too many open files" from a kubelet), as kind's nodes do. up raises it.
INOTIFY_INSTANCES=1024
# Paths the kubelet, containerd and the CNI plugins use whatever they are told; each node sees
# its own directory there (a bind mount in its mount namespace). A missing one is created on the
# host as an empty mount point, recorded, and removed by down if still empty.
NODE_DIRS=(/var/lib/kubelet /var/lib/cni /etc/cni/net.d /var/log/pods /var/log/containers)

UP_TIMEOUT=${KUBE_MULTI_UP_TIMEOUT:-420}

log() { printf 'kube-multi: %s\n' "$*" >&2; }

# shellcheck source=kube-multi/nodes.sh
source "$MULTI_HERE/kube-multi/nodes.sh"
# shellcheck source=kube-multi/cni.sh
source "$MULTI_HERE/kube-multi/cni.sh"
# shellcheck source=kube-multi/cilium.sh
source "$MULTI_HERE/kube-multi/cilium.sh"
# shellcheck source=kube-multi/coredns.sh
source "$MULTI_HERE/kube-multi/coredns.sh"
# shellcheck source=kube-multi/config.sh
source "$MULTI_HERE/kube-multi/config.sh"
# shellcheck source=kube-multi/cluster.sh
source "$MULTI_HERE/kube-multi/cluster.sh"

usage() { echo "usage: $0 up [--nodes N] [--cni routes|vxlan|cilium] | status | down | load TAR | build [cilium]   (each with [--name NAME])" >&2; exit 2; }

cmd_load() {
  local tar=$1 n i
  [ -f "$tar" ] || die "load: '$tar' is not a file (an image archive from docker save)"
  n=$(nodes_up)
  [ "$n" != 0 ] || die "load: the multi-node cluster${NAME:+ '$NAME'} is not up"
  for ((i = 1; i <= n; i++)); do
    ctr --address "$(node_sock "$i")" -n k8s.io images import "$tar" >/dev/null || die "load: import into $(node_name "$i") failed"
  done
  log "loaded $tar into $n nodes"
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0   # sourced: functions only

# --name NAME (anywhere after the command) picks the instance; without it, the default one.
cmd=${1:-}
shift || true
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --name)
      valid_name "${2:-}" || die "--name: '${2:-}' is not a valid instance name (a lowercase letter, then up to 5 lowercase letters or digits; none for the default instance)"
      instance "$2"
      shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
set -- "${args[@]}"

mkdir -p "$CACHE"
exec 8>"$LOCK"   # this instance's; not kube-local.sh's lock either: the clusters are independent
case $cmd in
  up)
    nodes=3 cni=routes
    while [ $# -gt 0 ]; do
      case $1 in
        --nodes) nodes=${2:-}; shift 2 ;;
        --cni) cni=${2:-}; shift 2 ;;
        *) usage ;;
      esac
    done
    [[ $nodes =~ ^[0-9]+$ ]] && [ "$nodes" -ge 3 ] && [ "$nodes" -le $MAX_NODES ] ||
      die "--nodes: '$nodes' is not a whole number from 3 to $MAX_NODES"
    case $cni in routes | vxlan | cilium) ;; *) die "--cni: '$cni' is not one of routes, vxlan, cilium" ;; esac
    flock -w 900 8 || die "another kube-multi.sh up/down has held $LOCK for 15 min"
    cmd_up "$nodes" "$cni" ;;
  down) [ $# = 0 ] || usage; flock -w 900 8 || die "$LOCK held for 15 min"; cmd_down ;;
  status) [ $# = 0 ] || usage; cmd_status ;;
  load) [ $# = 1 ] || usage; cmd_load "$1" ;;
  # Everything up builds, for routes and vxlan, each cached by version under its own flock: CI's
  # early build phase runs it beside the other builds, so that no test pays a cold build.
  # `build cilium` adds Cilium's agent and CNI plugin (docs/kubernetes.md: what it costs).
  build)
    case ${1:-} in '' | cilium) ;; *) usage ;; esac
    cmd_build; build_coredns; build_flannel
    [ "${1:-}" != cilium ] || build_cilium ;;
  *) usage ;;
esac
