# shellcheck shell=bash
# The engines of scripts/swarm-multi.sh (sourced; uses its variables, kube-local.sh's process
# functions and kube-multi/nodes.sh's namespaces).

engine_sock() { echo "$RUN/n$1/docker.sock"; }
gw_subnet() { echo "$GW_PREFIX.$1.0/24"; }

# dk I ARGS...: the docker CLI against node I's engine.
dk() {
  local i=$1
  shift
  docker -H "unix://$(engine_sock "$i")" "$@"
}

engine_ready() { dk "$1" info --format '{{.ID}}' >/dev/null 2>&1; }

# start_engine I: node I's dockerd, inside its namespaces. Everything that would otherwise be
# shared with the host engine is its own: data, exec root, pidfile, socket, cgroup parent, the
# configuration file (an empty one: the host's daemon.json names runtimes and settings for the
# host engine), and, through the mount namespace, /run/docker (libnetwork's namespace files),
# /run/containerd (so it does not find a system containerd and starts its own) and /etc/docker
# (its own engine key).
start_engine() {
  local i=$1 d=$STATE/n$1 r=$RUN/n$1
  mkdir -p "$d/docker" "$r/exec"
  [ -f "$r/daemon.json" ] || echo '{}' >"$r/daemon.json"
  start "dockerd-$i" nsenter --net="$NSDIR/n$i.net" --mount="$NSDIR/n$i.mnt" --uts="$NSDIR/n$i.uts" -- \
    dockerd --config-file "$r/daemon.json" -H "unix://$(engine_sock "$i")" \
    --data-root "$d/docker" --exec-root "$r/exec" --pidfile "$r/docker.pid" \
    --cgroup-parent "$CGROUP_BASE/n$i" --storage-driver overlay2
  wait_for "dockerd-$i" "$UP_TIMEOUT" engine_ready "$i"
}

# gateway I: node I's docker_gwbridge, made before the node joins a swarm (the engine then uses
# it) so that every node's has a subnet of its own, which the host routes to through the node:
# boxbench's readiness checks reach a task at its docker_gwbridge address, as on one engine.
# The node forwards new connections from the host only (DOCKER-USER, which dockerd keeps).
gateway() {
  local i=$1
  dk "$i" network inspect docker_gwbridge >/dev/null 2>&1 ||
    dk "$i" network create --driver bridge --subnet "$(gw_subnet "$i")" \
      --opt com.docker.network.bridge.name=docker_gwbridge \
      --opt com.docker.network.bridge.enable_icc=false \
      --opt com.docker.network.bridge.enable_ip_masquerade=true docker_gwbridge >/dev/null
  nsx "$i" iptables -C DOCKER-USER -s "$NET_PREFIX.1" -o docker_gwbridge -j ACCEPT 2>/dev/null ||
    nsx "$i" iptables -I DOCKER-USER -s "$NET_PREFIX.1" -o docker_gwbridge -j ACCEPT
  ip route replace "$(gw_subnet "$i")" via "$(node_addr "$i")" dev "$BRIDGE"
}

swarm_state() { dk "$1" info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null; }

# join_swarm N: node 1 initialises the swarm (on its own address, overlay subnets from ADDR_POOL),
# the others join as workers; every node gets the engine label.
join_swarm() {
  local n=$1 i addr token id
  addr=$(node_addr 1)
  if [ "$(swarm_state 1)" != active ]; then
    dk 1 swarm init --advertise-addr "$addr" --listen-addr "$addr:2377" --data-path-addr "$addr" \
      --default-addr-pool "$ADDR_POOL" --default-addr-pool-mask-length 24 >/dev/null
    log "swarm initialised on $(node_name 1) ($addr:2377)"
  fi
  token=$(dk 1 swarm join-token -q worker)
  for ((i = 2; i <= n; i++)); do
    [ "$(swarm_state "$i")" = active ] && continue
    dk "$i" swarm join --token "$token" --advertise-addr "$(node_addr "$i")" \
      --listen-addr "$(node_addr "$i"):2377" --data-path-addr "$(node_addr "$i")" "$addr:2377" >/dev/null
    log "$(node_name "$i") joined"
  done
  for ((i = 1; i <= n; i++)); do
    id=$(dk "$i" info --format '{{.Swarm.NodeID}}')
    dk 1 node update --label-add "$ENGINE_LABEL=unix://$(engine_sock "$i")" "$id" >/dev/null
  done
}

# ready_nodes: how many nodes the manager sees Ready.
ready_nodes() { dk 1 node ls --format '{{.Status}}' 2>/dev/null | grep -c '^Ready$' || true; }

cmd_up() {
  local n=$1 i t
  local was
  was=$(nodes_up)
  [ "$was" = 0 ] || [ "$was" = "$n" ] || die "a swarm of $was nodes is up; run down first to make one of $n"
  mkdir -p "$STATE" "$RUN" "$LOGS"
  save_node_dirs
  make_host_net
  for ((i = 1; i <= n; i++)); do
    make_node "$i"
    start_engine "$i"
    gateway "$i"
  done
  echo "$n" >"$STATE/nodes"
  join_swarm "$n"
  for ((t = 0; t < UP_TIMEOUT * 2; t++)); do
    [ "$(ready_nodes)" = "$n" ] && break
    sleep 0.5
  done
  [ "$(ready_nodes)" = "$n" ] || { dk 1 node ls >&2 || true; die "not every node became Ready in ${UP_TIMEOUT}s"; }
  log "up: $n engines in one swarm; manager DOCKER_HOST=unix://$(engine_sock 1)"
}

cmd_status() {
  local n i
  n=$(nodes_up)
  [ "$n" != 0 ] || { log "no swarm of engines is up"; return 1; }
  for ((i = 1; i <= n; i++)); do
    alive "dockerd-$i" || { log "$(node_name "$i"): its dockerd is not running"; return 1; }
  done
  dk 1 node ls
  [ "$(ready_nodes)" = "$n" ] || { log "not every node is Ready"; return 1; }
}

cmd_down() {
  local i left
  # Each engine stops its containers (and its containerd) on TERM; the rest goes with the
  # namespaces. No swarm leave: the swarm exists only in these engines' data roots.
  for ((i = 1; i <= MAX_NODES; i++)); do
    stop "dockerd-$i" 60
  done
  end_nodes
  for ((i = 1; i <= MAX_NODES; i++)); do
    ip link del "$VETH_PREFIX$i" 2>/dev/null || true   # gone with its namespace, or a moment after
    ip route del "$(gw_subnet "$i")" 2>/dev/null || true
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE"; fi
  while iptables -C FORWARD -i "$BRIDGE" -o "$BRIDGE" -m comment --comment "$FW_COMMENT" -j ACCEPT 2>/dev/null; do
    iptables -D FORWARD -i "$BRIDGE" -o "$BRIDGE" -m comment --comment "$FW_COMMENT" -j ACCEPT
  done
  CGROUP_ROOT=$CGROUP_BASE remove_cgroups
  restore_node_dirs
  left=$(findmnt -rn -o TARGET | awk -v a="$STATE/" -v b="$RUN/" 'index($0, a) == 1 || index($0, b) == 1')
  [ -z "$left" ] || die "still mounted, nothing removed: $left"
  rm -rf --one-file-system "$STATE" "$RUN" "$LOGS"
  log "down: every engine, namespace and address of the swarm is removed"
}
