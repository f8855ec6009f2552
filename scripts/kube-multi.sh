#!/usr/bin/env bash
# A real multi-node Kubernetes cluster on this one host, for boxbench's tests of topologies across
# nodes and for comparing CNIs. See docs/kubernetes.md ("The multi-node local cluster").
#
#   scripts/kube-multi.sh up [--nodes N] [--cni routes|vxlan]   build what is missing, start, wait
#   scripts/kube-multi.sh status     exit 0 iff every component runs and every node is Ready
#   scripts/kube-multi.sh down       stop everything it started, remove everything it created
#   scripts/kube-multi.sh load TAR   import an image archive (`docker save` format) into every node
#   scripts/kube-multi.sh build      build (or find cached) everything up needs, for both CNIs
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
# kernel tunables the kubelet sets (saved before the first up, restored by down).
set -euo pipefail

MULTI_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Functions only (kube-local.sh returns before doing anything when sourced): the build of the
# Kubernetes binary and the pause image, pidfile-based process control, certificates.
# shellcheck source=kube-local.sh
source "$MULTI_HERE/kube-local.sh"
HERE=$MULTI_HERE SRC=$MULTI_HERE/kube-local   # kube-local.sh took them from $0

# ---- the contract other code relies on (docs/kubernetes.md) ------------------------------------
STATE=/var/lib/boxbench/multi
RUN=/run/boxbench/multi
LOGS=/var/log/boxbench-multi
KUBECONFIG_ADMIN=$STATE/admin.kubeconfig
CONTEXT=boxbench-multi
NODE_PREFIX=bbmulti-          # node names: bbmulti-1 … bbmulti-N
BRIDGE=bbmulti0
NET_PREFIX=10.250.0           # the bridge is .1, node i is .(10+i)
POD_CIDR=10.245.0.0/16        # --cluster-cidr; each node gets a /24 from the controller-manager
SERVICE_CIDR=10.97.0.0/16
SERVICE_API_IP=10.97.0.1
DNS_IP=10.97.0.10             # the kube-dns Service (CoreDNS)
CGROUP_BASE=/boxbench-multi   # node i's kubelet cgroupRoot is /boxbench-multi/n<i>
CNI_NET_NAME=boxbench-multi
FW_COMMENT=boxbench-multi
MAX_NODES=9

PIDS=$RUN/pids
PKI=$STATE/pki
BIN=$RUN/bin
NSDIR=$RUN/ns                 # the nodes' namespace files (a private bind mount of its own)
CNI_BIN=$RUN/cni-bin          # Debian's CNI plugins plus flannel's, for every node's containerd
SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
         kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
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
# shellcheck source=kube-multi/coredns.sh
source "$MULTI_HERE/kube-multi/coredns.sh"
# shellcheck source=kube-multi/config.sh
source "$MULTI_HERE/kube-multi/config.sh"
# shellcheck source=kube-multi/cluster.sh
source "$MULTI_HERE/kube-multi/cluster.sh"

usage() { echo "usage: $0 up [--nodes N] [--cni routes|vxlan] | status | down | load TAR | build" >&2; exit 2; }

cmd_load() {
  local tar=$1 n i
  [ -f "$tar" ] || die "load: '$tar' is not a file (an image archive from docker save)"
  n=$(nodes_up)
  [ "$n" != 0 ] || die "load: the multi-node cluster is not up"
  for ((i = 1; i <= n; i++)); do
    ctr --address "$(node_sock "$i")" -n k8s.io images import "$tar" >/dev/null || die "load: import into $(node_name "$i") failed"
  done
  log "loaded $tar into $n nodes"
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0   # sourced: functions only

mkdir -p "$CACHE"
exec 8>"$CACHE/kube-multi.lock"   # not kube-local.sh's lock: the two clusters are independent
case ${1:-} in
  up)
    shift
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
    case $cni in routes | vxlan) ;; *) die "--cni: '$cni' is not one of routes, vxlan" ;; esac
    flock -w 900 8 || die "another kube-multi.sh up/down has held $CACHE/kube-multi.lock for 15 min"
    cmd_up "$nodes" "$cni" ;;
  down) flock -w 900 8 || die "kube-multi.sh lock held for 15 min"; cmd_down ;;
  status) cmd_status ;;
  load) [ $# = 2 ] || usage; cmd_load "$2" ;;
  # Everything up builds, for both CNIs, each cached by version under its own flock: CI's early
  # build phase runs it beside the other builds, so that no test pays a cold build.
  build) cmd_build; build_coredns; build_flannel ;;
  *) usage ;;
esac
