#!/usr/bin/env bash
# A Docker Swarm of several engines on this one host, for boxbench's topologies across Swarm
# nodes (docs/swarm.md, "A swarm of several engines").
#
#   scripts/swarm-multi.sh up [--nodes N]   start N engines (default 4), one swarm of them
#   scripts/swarm-multi.sh status           exit 0 iff every engine runs and every node is Ready
#   scripts/swarm-multi.sh down             stop everything it started, remove everything it made
#   scripts/swarm-multi.sh env              print BOXBENCH_SWARM_HOST=<the manager engine>
#
# Each node is a set of namespaces of this host (network, mount, UTS: scripts/kube-multi/nodes.sh,
# the multi-node Kubernetes cluster's) with its own address on a bridge this script creates and
# its own dockerd: its own --data-root, --exec-root, --pidfile, socket, --cgroup-parent and
# configuration file, and (in its mount namespace) private /run/docker, /run/containerd and
# /etc/docker, so it starts a containerd of its own and never reads the host engine's settings.
# Node 1 is the swarm's manager, the others join as workers. Every node carries the label
# boxbench.engine = its engine's socket, which is how boxbench reaches a task's engine (its
# containers, cgroups, images). Images are not loaded here: boxbench copies the image a task
# needs from the host's engine into a node's engine when that engine lacks it (by image id).
#
# The host engine and its swarm are untouched. What the host sees while it is up: the bridge
# bbswarm0 (10.251.0.1/24) and its veths bbs<N>, a route per node to its docker_gwbridge
# (10.252.<N>.0/24; boxbench's readiness checks reach tasks there, as on one engine), one
# FORWARD rule (commented boxbench-swarm), the cgroup subtree /boxbench-swarm, and
# /var/lib/boxbench/swarm-multi, /run/boxbench/swarm-multi, /var/log/boxbench-swarm-multi.
set -euo pipefail

SWARM_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Functions only (pidfile process control, cgroup removal); kube-local.sh's own variables are
# overridden below where they are used.
# shellcheck source=kube-local.sh
source "$SWARM_HERE/kube-local.sh"

# ---- the contract other code relies on (docs/swarm.md) -----------------------------------------
STATE=/var/lib/boxbench/swarm-multi
RUN=/run/boxbench/swarm-multi
LOGS=/var/log/boxbench-swarm-multi
NODE_PREFIX=bbswarm-          # host names: bbswarm-1 … bbswarm-N
BRIDGE=bbswarm0
VETH_PREFIX=bbs
NET_PREFIX=10.251.0           # the bridge is .1, node i is .(10+i)
GW_PREFIX=10.252              # node i's docker_gwbridge is 10.252.i.0/24
ADDR_POOL=10.254.0.0/16       # the swarm's overlay networks
CGROUP_BASE=/boxbench-swarm   # node i's --cgroup-parent is /boxbench-swarm/n<i>
FW_COMMENT=boxbench-swarm
ENGINE_LABEL=boxbench.engine
MAX_NODES=9
DEFAULT_NODES=4               # three for a 3-node ring, one for its client

PIDS=$RUN/pids
NSDIR=$RUN/ns
NODE_DIRS=(/run/docker /run/containerd /etc/docker)
UP_TIMEOUT=${SWARM_MULTI_UP_TIMEOUT:-180}
UPDOWN_LOCK=/var/lib/boxbench/swarm-multi.lock

log() { printf 'swarm-multi: %s\n' "$*" >&2; }

# shellcheck source=kube-multi/nodes.sh
source "$SWARM_HERE/kube-multi/nodes.sh"
# shellcheck source=swarm-multi/engines.sh
source "$SWARM_HERE/swarm-multi/engines.sh"

usage() { echo "usage: $0 up [--nodes N] | status | down | env" >&2; exit 2; }

serialize() {
  mkdir -p "$(dirname "$UPDOWN_LOCK")"
  exec 8>"$UPDOWN_LOCK"
  flock -w 600 8 || die "another swarm-multi.sh up/down has held $UPDOWN_LOCK for 10 min"
}

main() {
  [ "$(id -u)" = 0 ] || die "must run as root (namespaces, bridges, engines)"
  local cmd=${1:-}
  shift || true
  case $cmd in
    up)
      local n=$DEFAULT_NODES
      while [ $# -gt 0 ]; do
        case $1 in
          --nodes) n=${2:-}; shift 2 ;;
          *) usage ;;
        esac
      done
      [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le "$MAX_NODES" ] ||
        die "--nodes $n is not valid (valid: 2 to $MAX_NODES)"
      serialize
      cmd_up "$n"
      ;;
    status) cmd_status ;;
    down) serialize; cmd_down ;;
    env) echo "BOXBENCH_SWARM_HOST=unix://$(engine_sock 1)" ;;
    *) usage ;;
  esac
}

main "$@"
