# shellcheck shell=bash
# up, status and down of scripts/kube-multi.sh (sourced).

# The control plane (node 1) and the per-node components, by pidfile name.
components() {
  local n=$1 i
  echo etcd kube-apiserver kube-controller-manager kube-scheduler
  for ((i = 1; i <= n; i++)); do
    echo "containerd-$i kubelet-$i kube-proxy-$i"
    case $(cat "$STATE/cni" 2>/dev/null) in
      vxlan) echo "flanneld-$i" ;;
      cilium) echo "cilium-agent-$i" ;;
    esac
  done
  return 0
}

# in_node I NAME CMD...: start CMD (pidfile NAME) inside node I's namespaces.
in_node() {
  local i=$1 name=$2
  shift 2
  start "$name" nsenter --net="$NSDIR/n$i.net" --mount="$NSDIR/n$i.mnt" --uts="$NSDIR/n$i.uts" -- "$@"
}

cmd_up() {
  local n=$1 cni=$2 i c deadline kube need=() was api
  for c in etcd containerd ctr runc openssl iptables ip nsenter unshare curl gcc; do
    command -v "$c" >/dev/null || need+=("$c")
  done
  for c in ptp host-local portmap loopback bridge; do
    [ -x "/usr/lib/cni/$c" ] || need+=("cni:$c")
  done
  [ ${#need[@]} -eq 0 ] || die "missing: ${need[*]} (scripts/setup.sh installs them)"
  was=$(nodes_up)
  if [ "$was" != 0 ] && { [ "$was" != "$n" ] || [ "$(cat "$STATE/cni")" != "$cni" ]; }; then
    die "the cluster is up with $was nodes and --cni $(cat "$STATE/cni"); run 'scripts/kube-multi.sh down' before asking for $n nodes and --cni $cni"
  fi

  deadline=$(( $(date +%s) + UP_TIMEOUT ))
  cmd_build
  build_coredns
  [ "$cni" = vxlan ] && build_flannel
  [ "$cni" = cilium ] && build_cilium
  kube=$(kube_binary)
  # A deadline after the builds: they are cached, and a cold one is not what it bounds.
  deadline=$(( $(date +%s) + UP_TIMEOUT ))

  mkdir -p "$STATE" "$RUN" "$LOGS" "$PIDS" "$BIN"
  chmod 700 "$STATE"
  # Cilium's fixed paths (state, API and monitor sockets, cgroup mount point) under /run/cilium:
  # node-private under --cni cilium only, so routes and vxlan leave the host exactly as before.
  [ "$cni" = cilium ] && NODE_DIRS+=(/run/cilium)
  host_lock
  new_slot
  # Saved by the first instance up (nothing of another instance has changed them yet).
  mkdir -p "$HOST_SAVED"
  save_host_sysctls
  [ "$(sysctl -n fs.inotify.max_user_instances)" -ge "$INOTIFY_INSTANCES" ] ||
    sysctl -qw fs.inotify.max_user_instances="$INOTIFY_INSTANCES"
  save_node_dirs
  echo "$n" >"$STATE/nodes"   # up, for instances_up: under the host lock
  host_unlock
  api=$(api_addr)   # the slot's
  echo "$cni" >"$STATE/cni"
  for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
    ln -sfn "$kube" "$BIN/$c"
  done
  make_multi_pki "$n"
  make_host_net
  [ "$cni" = vxlan ] && flannel_cni_bin
  [ "$cni" = cilium ] && cilium_cni_bin
  for ((i = 1; i <= n; i++)); do
    make_node "$i"
    node_configs "$i" "$cni"
  done

  in_node 1 etcd etcd --name boxbench-multi --data-dir "$STATE/etcd" \
    --listen-client-urls https://127.0.0.1:2379 --advertise-client-urls https://127.0.0.1:2379 \
    --listen-peer-urls https://127.0.0.1:2380 --initial-advertise-peer-urls https://127.0.0.1:2380 \
    --initial-cluster boxbench-multi=https://127.0.0.1:2380 --logger zap --log-outputs stderr \
    --cert-file "$PKI/etcd-server.crt" --key-file "$PKI/etcd-server.key" --client-cert-auth --trusted-ca-file "$PKI/ca.crt" \
    --peer-cert-file "$PKI/etcd-server.crt" --peer-key-file "$PKI/etcd-server.key" --peer-client-cert-auth --peer-trusted-ca-file "$PKI/ca.crt" \
    --enable-v2=false --quota-backend-bytes 2147483648
  for ((i = 1; i <= n; i++)); do
    in_node "$i" "containerd-$i" containerd --config "$(node_dir "$i")/containerd/config.toml"
  done
  in_node 1 kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers https://127.0.0.1:2379 --etcd-cafile "$PKI/ca.crt" \
    --etcd-certfile "$PKI/etcd-client.crt" --etcd-keyfile "$PKI/etcd-client.key" \
    --bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$api" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" --anonymous-auth=false \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP,Hostname \
    --service-cluster-ip-range "$SERVICE_CIDR" --service-node-port-range 30000-32767 \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --allow-privileged=true --profiling=false --event-ttl 1h

  for ((i = 1; i <= n; i++)); do
    wait_for "containerd-$i" 60 ctr --address "$(node_sock "$i")" version
    import_image "$i" "$(pause_tar)" "$PAUSE_IMAGE"
    import_image "$i" "$(coredns_tar)" "$COREDNS_IMAGE"
  done
  wait_for etcd 60 nsx 1 curl -sf --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/etcd-client.crt" \
    --key "$PKI/etcd-client.key" https://127.0.0.1:2379/health
  wait_for kube-apiserver 180 kubectl get --raw /readyz

  in_node 1 kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --allocate-node-cidrs=true --cluster-cidr "$POD_CIDR" --node-cidr-mask-size 24 \
    --profiling=false
  in_node 1 kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig "$STATE/scheduler.kubeconfig" \
    --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false

  CGROUP_ROOT=$CGROUP_BASE make_cgroup_root
  for ((i = 1; i <= n; i++)); do
    CGROUP_ROOT=$CGROUP_BASE/n$i make_cgroup_root
    in_node "$i" "kubelet-$i" "$BIN/kubelet" --config "$(node_dir "$i")/kubelet/config.yaml" \
      --kubeconfig "$STATE/kubelet-$i.kubeconfig" --hostname-override "$(node_name "$i")" \
      --node-ip "$(node_addr "$i")" --pod-infra-container-image "$PAUSE_IMAGE"
    in_node "$i" "kube-proxy-$i" "$BIN/kube-proxy" --config "$(node_dir "$i")/kube-proxy.yaml"
  done

  log "waiting for $n nodes to register and get their pod CIDRs"
  wait_pod_cidrs "$n" "$deadline"
  case $cni in
    routes) routes_network "$n" ;;
    vxlan) start_flannel "$n" "$deadline" ;;
    cilium) start_cilium "$n" "$deadline" ;;
  esac
  host_routes "$n"

  log "waiting for $n nodes to be Ready"
  for ((i = 1; i <= n; i++)); do
    until [ "$(node_ready "$i")" = True ]; do
      for c in $(components "$n"); do alive "$c" || fail_with_log "$c"; done
      [ "$(date +%s)" -lt "$deadline" ] || fail_with_log "kubelet-$i"
      sleep 1
    done
  done
  # What the cluster is made of, where boxbench records it with every run (docs/kubernetes.md):
  # nothing in the API says which CNI or kube-proxy mode a node has.
  for ((i = 1; i <= n; i++)); do
    kubectl annotate node "$(node_name "$i")" --overwrite >/dev/null \
      "boxbench/cni=$cni" boxbench/kube-proxy-mode=iptables
  done
  deploy_coredns "$deadline"
  log "up: $n nodes Ready, CNI $cni, cluster DNS $DNS_IP; kubeconfig $KUBECONFIG_ADMIN (context $CONTEXT); $BIN/kubectl is kubectl"
}

node_ready() {
  kubectl get node "$(node_name "$1")" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true
}

cmd_status() {
  local n c ok=0 i r
  n=$(nodes_up)
  if [ "$n" = 0 ]; then
    echo "not up"
    return 1
  fi
  for c in $(components "$n"); do
    if alive "$c"; then
      printf '%-24s running (pid %s)\n' "$c" "$(pid_of "$c")"
    else
      printf '%-24s not running\n' "$c"
      ok=1
    fi
  done
  for ((i = 1; i <= n; i++)); do
    r=$(timeout 20 "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" --request-timeout 10s get node "$(node_name "$i")" \
      -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.spec.podCIDR}' 2>/dev/null || true)
    printf '%-24s %s\n' "node $(node_name "$i")" "$(node_addr "$i") Ready=${r:-unknown}"
    case $r in True*) ;; *) ok=1 ;; esac
  done
  printf '%-24s %s\n' kubeconfig "$KUBECONFIG_ADMIN (context $CONTEXT)"
  printf '%-24s %s\n' kubectl "$BIN/kubectl (Kubernetes $KUBE_VERSION)"
  printf '%-24s %s\n' CNI "$(cat "$STATE/cni")"
  printf '%-24s pods %s, services %s, DNS %s\n' networks "$POD_CIDR" "$SERVICE_CIDR" "$DNS_IP"
  return $ok
}

cmd_down() {
  local n i t left
  n=$(nodes_up)
  [ "$n" = 0 ] && n=$MAX_NODES   # a failed up may have left part of a cluster: look for all
  # 1. No new pods; every pod deleted so that each kubelet tears its sandboxes down through the
  #    CRI and the CNI.
  stop kube-controller-manager
  stop kube-scheduler
  if alive kube-apiserver && [ -x "$BIN/kubectl" ]; then
    timeout 60 "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" delete pods --all --all-namespaces \
      --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
    for ((t = 0; t < 120; t++)); do
      left=
      for ((i = 1; i <= n; i++)); do
        [ -S "$(node_sock "$i")" ] && [ -n "$(ctr --address "$(node_sock "$i")" -n k8s.io tasks ls -q 2>/dev/null)" ] && left=1
      done
      [ -z "$left" ] && break
      sleep 0.5
    done
  fi
  for ((i = 1; i <= n; i++)); do
    stop "kubelet-$i" 30
    stop "kube-proxy-$i"
    stop "flanneld-$i"
    stop "cilium-agent-$i" 30
  done
  stop kube-apiserver 30
  stop etcd
  # 2. What the kubelets did not stop, then the containerds.
  for ((i = 1; i <= n; i++)); do
    alive "containerd-$i" || continue
    for t in $(ctr --address "$(node_sock "$i")" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$(node_sock "$i")" -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
    done
    stop "containerd-$i" 30
  done
  # 3. Anything left in a node's namespaces or under our cgroup root (shims, containers), then
  #    the namespaces (their mounts go with them).
  end_nodes
  # 4. The host's network, cgroups, directories.
  for ((i = 1; i <= MAX_NODES; i++)); do
    # The kernel removes a veth with its peer's namespace, asynchronously: gone between the
    # show and the del is done, not a failure (down of 2026-11-27: "Cannot find device").
    if ip link show "$VETH_PREFIX$i" >/dev/null 2>&1 && ! ip link del "$VETH_PREFIX$i" 2>/dev/null; then
      ip link show "$VETH_PREFIX$i" >/dev/null 2>&1 && die "cannot delete $VETH_PREFIX$i"
    fi
  done
  ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE"
  while iptables -C FORWARD -i "$BRIDGE" -o "$BRIDGE" -m comment --comment "$FW_COMMENT" -j ACCEPT 2>/dev/null; do
    iptables -D FORWARD -i "$BRIDGE" -o "$BRIDGE" -m comment --comment "$FW_COMMENT" -j ACCEPT
  done
  CGROUP_ROOT=$CGROUP_BASE remove_cgroups
  left=$(findmnt -rn -o TARGET | awk -v a="$STATE/" -v b="$RUN/" 'index($0, a) == 1 || index($0, b) == 1')
  [ -z "$left" ] || die "still mounted, nothing removed: $left"
  # 5. What the instances share, by the last one down: another's nodes still bind over the host
  #    directories and run kubelets that want the tunables.
  host_lock
  rm -f "$STATE/nodes"
  if [ -z "$(instances_up)" ]; then
    restore_node_dirs
    if [ -f "$HOST_SAVED/sysctl.saved" ]; then
      while IFS= read -r line; do
        [ -n "$line" ] && { sysctl -qw "$line" 2>/dev/null || true; }
      done <"$HOST_SAVED/sysctl.saved"
    fi
    rm -rf --one-file-system "$HOST_SAVED"
  else
    log "host directories and kernel tunables stay for the instances still up: $(instances_up | tr '\n' ' ')"
  fi
  rm -rf --one-file-system "$STATE" "$RUN" "$LOGS"
  host_unlock
  log "down: everything of the multi-node cluster${NAME:+ '$NAME'} is removed (the build caches stay)"
}

# save_host_sysctls: the values of SYSCTLS before any instance changed them, kept by the first
# instance up (a key the record lacks is added: nothing of ours has changed it yet either).
save_host_sysctls() {
  local f=$HOST_SAVED/sysctl.saved k
  touch "$f"
  for k in "${SYSCTLS[@]}"; do
    grep -q "^$k=" "$f" || ! sysctl -n "$k" >/dev/null 2>&1 || echo "$k=$(sysctl -n "$k")" >>"$f"
  done
}

# The lock over what the instances share ($HOST_SAVED, the slots), held for moments.
host_lock() {
  exec 9>"$HOST_LOCK"
  flock -w 300 9 || die "$HOST_LOCK held for 5 min"
}
host_unlock() { flock -u 9; exec 9>&-; }
