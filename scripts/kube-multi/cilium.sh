# shellcheck shell=bash
# The eBPF pod network of scripts/kube-multi.sh (sourced): `--cni cilium`.
#
# Cilium v1.20.2's agent and CNI plugin, built from the wrapper module scripts/kube-multi/cilium
# (see its go.mod for why), run as processes in every node like flanneld, without the operator:
# the agent takes each node's spec.podCIDR (--ipam kubernetes), allocates identities as CRDs
# itself, and the CRDs the operator would register are applied from the module's own YAML.
# Pods reach pods on other nodes through Cilium's VXLAN tunnel (cilium_vxlan, UDP 8472, in each
# node's network namespace); kube-proxy stays (no kube-proxy replacement, no socket LB: those
# attach BPF programs to the cgroup v2 root, which on this host would be the whole machine's).
#
# What the agent touches, and why it all goes with the cluster:
#   - its BPF programs are attached (tc/tcx) to devices inside the node's network namespace
#     (eth0, cilium_host/net/vxlan, the pods' lxc veths): they go with the namespace;
#   - its maps are pinned in a bpffs mounted at /sys/fs/bpf inside the node's mount namespace
#     only (the host has none there): they go with the namespace;
#   - /run/cilium (state, sockets, cgroup mount point) is node-private (added to NODE_DIRS by up);
#   - it writes two kernel-wide tunables, kernel.unprivileged_bpf_disabled (1 cannot be undone
#     without a reboot) and kernel.timer_migration; in each node they are made read-only (a
#     read-only bind mount of the file onto itself), so its writes fail, as it allows.

CILIUM_VERSION=v1.20.2
CILIUM_CACHE=${BOXBENCH_CACHE:-/var/cache/boxbench}/cilium   # BOXBENCH_CACHE moves every build cache (docs/ci.md)
# clang >= 18.1 compiles the datapath at run time (Cilium's own minimum); Debian 12's clang-19.
CILIUM_LLVM=/usr/lib/llvm-19/bin

cilium_dir() { echo "$CILIUM_CACHE/$CILIUM_VERSION"; }

# build_cilium: cilium-agent and cilium-cni, plus the module's BPF sources (the agent's --lib-dir)
# and CRDs, cached by version under a flock; nothing from a registry.
build_cilium() {
  local dir src start
  dir=$(cilium_dir)
  mkdir -p "$dir"
  exec 7>"$dir/build.lock"
  flock 7
  if [ ! -x "$dir/cilium-agent" ] || [ ! -x "$dir/cilium-cni" ] || [ ! -d "$dir/lib/bpf" ] || [ ! -d "$dir/crds" ]; then
    command -v go >/dev/null || die "go is not installed (Cilium is built from source)"
    log "building Cilium $CILIUM_VERSION (agent, CNI plugin) from source (cold: many minutes on 2 cores)"
    start=$(date +%s)
    (cd "$MULTI_HERE/kube-multi/cilium" && GOCACHE=$CILIUM_CACHE/go-build GOFLAGS=-mod=readonly CGO_ENABLED=0 \
      go build -trimpath -ldflags "-s -w" -o "$dir/cilium-agent.tmp" github.com/cilium/cilium/daemon &&
      GOCACHE=$CILIUM_CACHE/go-build GOFLAGS=-mod=readonly CGO_ENABLED=0 \
      go build -trimpath -ldflags "-s -w" -o "$dir/cilium-cni.tmp" github.com/cilium/cilium/plugins/cilium-cni) ||
      die "Cilium build failed"
    src=$(cd "$MULTI_HERE/kube-multi/cilium" && GOFLAGS=-mod=readonly go list -m -f '{{.Dir}}' github.com/cilium/cilium) ||
      die "Cilium's module directory not found"
    rm -rf "$dir/lib" "$dir/crds"
    mkdir -p "$dir/lib" "$dir/crds"
    cp -r "$src/bpf" "$dir/lib/bpf"
    cp "$src"/pkg/k8s/apis/cilium.io/client/crds/v2/*.yaml "$src"/pkg/k8s/apis/cilium.io/client/crds/v2alpha1/*.yaml "$dir/crds/"
    chmod -R u+w "$dir/lib" "$dir/crds"   # the module cache is read-only
    mv "$dir/cilium-agent.tmp" "$dir/cilium-agent"
    mv "$dir/cilium-cni.tmp" "$dir/cilium-cni"
    log "Cilium built in $(( $(date +%s) - start )) s: $dir"
  fi
  flock -u 7
  exec 7>&-
}

# The CNI plugin directory with cilium: Debian's plugins and cilium-cni (kube-multi/cni.sh).
cilium_cni_bin() { cni_bin_with "$(cilium_dir)/cilium-cni" cilium-cni; }

# The agent's identity: the rules of Cilium v1.20.2's Helm chart for the agent
# (install/kubernetes/cilium/templates/cilium-agent/clusterrole.yaml) with the features used here
# (no Hubble, no L2 announcements, no node annotations, no cluster network policies) and without
# secrets (no TLS, IPsec or Envoy here), and its role.yaml's ConfigMap Role in kube-system. Without the operator nobody collects stale identities:
# a cluster of a few hours does not need it.
cilium_rbac() {
  kubectl apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: boxbench-cilium}
rules:
- {apiGroups: [networking.k8s.io], resources: [networkpolicies], verbs: [get, list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [namespaces, services, pods, nodes], verbs: [get, list, watch]}
- {apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: [get, list, watch]}
- apiGroups: [cilium.io]
  resources: [ciliumloadbalancerippools, ciliumbgpnodeconfigs, ciliumbgpadvertisements, ciliumbgppeerconfigs,
    ciliumclusterwideenvoyconfigs, ciliumclusterwidenetworkpolicies, ciliumegressgatewaypolicies, ciliumendpoints,
    ciliumendpointslices, ciliumenvoyconfigs, ciliumidentities, ciliumlocalredirectpolicies, ciliumnetworkpolicies,
    ciliumnodes, ciliumnodeconfigs, ciliumcidrgroups, ciliuml2announcementpolicies, ciliumpodippools, ciliumdatapathplugins]
  verbs: [list, watch]
- {apiGroups: [cilium.io], resources: [ciliumidentities, ciliumendpoints, ciliumnodes], verbs: [create]}
- {apiGroups: [cilium.io], resources: [ciliumidentities], verbs: [update]}
- {apiGroups: [cilium.io], resources: [ciliumendpoints], verbs: [delete, get]}
- {apiGroups: [cilium.io], resources: [ciliumnodes, ciliumnodes/status], verbs: [get, update]}
- {apiGroups: [cilium.io], resources: [ciliumendpoints/status, ciliumendpoints, ciliuml2announcementpolicies/status, ciliumbgpnodeconfigs/status], verbs: [patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: boxbench-cilium}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: boxbench-cilium}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: boxbench-cilium}]
---
# The chart's cilium-config-agent Role: the agent watches its (absent) ConfigMap cilium-config.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: boxbench-cilium-config, namespace: kube-system}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: boxbench-cilium-config, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: boxbench-cilium-config}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: boxbench-cilium}]
EOF
}

# start_cilium N DEADLINE: the CRDs, the agent in every node, each node's CNI configuration,
# then wait until every agent answers on its socket.
start_cilium() {
  local n=$1 deadline=$2 i
  log "cilium: agent logs in $LOGS"
  command -v "$CILIUM_LLVM/clang" >/dev/null || die "cilium: $CILIUM_LLVM/clang is missing (Debian 12: apt-get install clang-19 llvm-19; not in scripts/setup.sh, which CI runs: CI does not run Cilium)"
  kubectl apply -f "$(cilium_dir)/crds" >/dev/null || die "cilium: applying the CRDs failed"
  kubectl wait --for condition=established --timeout 120s -f "$(cilium_dir)/crds" >/dev/null ||
    die "cilium: the CRDs were not established in 120 s"
  cilium_rbac
  for ((i = 1; i <= n; i++)); do
    # shellcheck disable=SC2016
    nsx "$i" bash -euc '
      findmnt -rn -t bpf --mountpoint /sys/fs/bpf >/dev/null || mount -t bpf bpffs /sys/fs/bpf
      for t in kernel/unprivileged_bpf_disabled kernel/timer_migration; do
        findmnt -rn --mountpoint "/proc/sys/$t" >/dev/null && continue
        mount --bind "/proc/sys/$t" "/proc/sys/$t"
        mount -o remount,bind,ro "/proc/sys/$t"
      done'
    start "cilium-agent-$i" nsenter --net="$NSDIR/n$i.net" --mount="$NSDIR/n$i.mnt" --uts="$NSDIR/n$i.uts" -- \
      env PATH="$CILIUM_LLVM:$PATH" K8S_NODE_NAME="$(node_name "$i")" "$(cilium_dir)/cilium-agent" \
      --k8s-kubeconfig-path "$STATE/cilium.kubeconfig" --lib-dir "$(cilium_dir)/lib" \
      --ipam kubernetes --k8s-require-ipv4-pod-cidr --enable-ipv4 --enable-ipv6=false \
      --routing-mode tunnel --tunnel-protocol vxlan --devices eth0 --direct-routing-device eth0 \
      --identity-allocation-mode crd --kube-proxy-replacement=false --bpf-lb-sock=false \
      --enable-ipv4-masquerade=false --enable-bpf-masquerade=false \
      --enable-l7-proxy=false --enable-envoy-config=false --enable-hubble=false \
      --enable-health-checking=false --enable-endpoint-health-checking=false \
      --cni-exclusive=false --write-cni-conf-when-ready=
    cat >"$(cni_conf "$i").new" <<EOF
{
  "cniVersion": "0.3.1",
  "name": "$CNI_NET_NAME",
  "plugins": [
    {"type": "cilium-cni"},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
    install_new "$(cni_conf "$i")" >/dev/null
  done
  for ((i = 1; i <= n; i++)); do
    until nsx "$i" curl -sf --max-time 5 --unix-socket /run/cilium/cilium.sock http://localhost/v1/healthz >/dev/null 2>&1; do
      alive "cilium-agent-$i" || fail_with_log "cilium-agent-$i"
      [ "$(date +%s)" -lt "$deadline" ] || fail_with_log "cilium-agent-$i"
      sleep 2
    done
  done
}
