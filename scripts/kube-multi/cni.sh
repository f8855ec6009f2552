# shellcheck shell=bash
# The two pod networks of scripts/kube-multi.sh (sourced), chosen at `up` with --cni:
#
#   routes  no encapsulation (what kind's kindnetd does): each node's pods on point-to-point
#           veths (Debian's `ptp` + `host-local` over the node's spec.podCIDR) and, in every
#           node, a route to each other node's pod CIDR via that node's address on the bridge.
#           The nodes are fixed when `up` runs, so the routes are written once, by this script.
#   vxlan   an overlay (flannel v0.28.10, VXLAN backend): flanneld in each node, its
#           --kube-subnet-mgr taking the node's spec.podCIDR and publishing its VTEP in the
#           node's annotations; pods on a bridge through the `flannel` CNI plugin (from
#           containernetworking/plugins v0.9.1, the last release that has it), which delegates
#           to Debian's `bridge` and `host-local`.
#
# Either way the controller-manager allocates the pod CIDRs (--allocate-node-cidrs) and the
# host gets a route to each node's pod CIDR, so boxbench on the host reaches pods by their IP.

FLANNEL_VERSION=v0.28.10
FLANNEL_CNI_VERSION=v0.9.1
FLANNEL_CACHE=${BOXBENCH_CACHE:-/var/cache/boxbench}/flannel   # BOXBENCH_CACHE moves every build cache (docs/ci.md)

pod_cidr() { kubectl get node "$(node_name "$1")" -o 'jsonpath={.spec.podCIDR}' 2>/dev/null || true; }

# wait_pod_cidrs N DEADLINE: every node registered and given its pod CIDR.
wait_pod_cidrs() {
  local n=$1 deadline=$2 i
  for ((i = 1; i <= n; i++)); do
    until [ -n "$(pod_cidr "$i")" ]; do
      alive "kubelet-$i" || fail_with_log "kubelet-$i"
      alive kube-controller-manager || fail_with_log kube-controller-manager
      [ "$(date +%s)" -lt "$deadline" ] || fail_with_log "kubelet-$i"
      sleep 1
    done
  done
}

cni_conf() { echo "$(node_dir "$1")/fs/etc/cni/net.d/10-$CNI_NET_NAME.conflist"; }

# routes_network N: the ptp configuration in each node and the routes between nodes.
routes_network() {
  local n=$1 i j cidr
  for ((i = 1; i <= n; i++)); do
    cidr=$(pod_cidr "$i")
    cat >"$(cni_conf "$i").new" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$CNI_NET_NAME",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "mtu": 1500,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "$cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
    install_new "$(cni_conf "$i")" >/dev/null
    for ((j = 1; j <= n; j++)); do
      [ "$i" = "$j" ] || nsx "$i" ip route replace "$(pod_cidr "$j")" via "$(node_addr "$j")" dev eth0
    done
  done
}

# host_routes N: this host reaches every node's pods through that node.
host_routes() {
  local n=$1 i
  for ((i = 1; i <= n; i++)); do
    ip route replace "$(pod_cidr "$i")" via "$(node_addr "$i")" dev "$BRIDGE"
  done
}

# ---- vxlan: flannel ------------------------------------------------------------------------------

flannel_dir() { echo "$FLANNEL_CACHE/$FLANNEL_VERSION"; }

# flanneld from the wrapper module scripts/kube-multi/flannel (see its go.mod for why), and the
# old flannel CNI plugin with go install; cached by version. flanneld needs cgo (its UDP
# backend's proxy is C), as upstream builds it.
build_flannel() {
  local dir start
  dir=$(flannel_dir)
  mkdir -p "$dir"
  exec 7>"$dir/build.lock"
  flock 7
  if [ ! -x "$dir/flanneld" ] || [ ! -x "$dir/flannel-cni-$FLANNEL_CNI_VERSION" ]; then
    command -v go >/dev/null || die "go is not installed (flannel is built from source)"
    log "building flannel $FLANNEL_VERSION and its CNI plugin $FLANNEL_CNI_VERSION from source"
    start=$(date +%s)
    (cd "$MULTI_HERE/kube-multi/flannel" && GOCACHE=$FLANNEL_CACHE/go-build GOFLAGS=-mod=readonly CGO_ENABLED=1 \
      go build -trimpath -ldflags "-s -w -X github.com/flannel-io/flannel/pkg/version.Version=$FLANNEL_VERSION" \
      -o "$dir/flanneld.tmp" github.com/flannel-io/flannel) || die "flanneld build failed"
    mv "$dir/flanneld.tmp" "$dir/flanneld"
    (cd "$dir" && GOBIN=$dir/tmp-bin GOCACHE=$FLANNEL_CACHE/go-build GOFLAGS= CGO_ENABLED=0 \
      go install -trimpath -ldflags "-s -w" "github.com/containernetworking/plugins/plugins/meta/flannel@$FLANNEL_CNI_VERSION") ||
      die "flannel CNI plugin build failed"
    mv "$dir/tmp-bin/flannel" "$dir/flannel-cni-$FLANNEL_CNI_VERSION"
    rmdir "$dir/tmp-bin"
    log "flannel built in $(( $(date +%s) - start )) s: $dir"
  fi
  flock -u 7
  exec 7>&-
}

# cni_bin_with PLUGIN NAME: the CNI plugin directory the nodes' containerd use with a CNI built
# here: Debian's plugins and PLUGIN as NAME.
cni_bin_with() {
  local p
  mkdir -p "$CNI_BIN"
  for p in /usr/lib/cni/*; do ln -sfn "$p" "$CNI_BIN/${p##*/}"; done
  ln -sfn "$1" "$CNI_BIN/$2"
}

# With vxlan: flannel's.
flannel_cni_bin() { cni_bin_with "$(flannel_dir)/flannel-cni-$FLANNEL_CNI_VERSION" flannel; }

flannel_rbac() {
  kubectl apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: boxbench-flannel}
rules:
- {apiGroups: [""], resources: [pods, nodes, namespaces], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [nodes/status], verbs: [patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: boxbench-flannel}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: boxbench-flannel}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: boxbench-flannel}]
EOF
}

# start_flannel N: flanneld in every node, then each node's CNI configuration once its subnet
# file exists.
start_flannel() {
  local n=$1 deadline=$2 i sub
  printf '{"Network": "%s", "EnableIPv6": false, "Backend": {"Type": "vxlan"}}\n' "$POD_CIDR" >"$STATE/flannel-net.json"
  flannel_rbac
  for ((i = 1; i <= n; i++)); do
    mkdir -p "$RUN/n$i/flannel"
    start "flanneld-$i" nsenter --net="$NSDIR/n$i.net" --mount="$NSDIR/n$i.mnt" --uts="$NSDIR/n$i.uts" -- \
      env NODE_NAME="$(node_name "$i")" "$(flannel_dir)/flanneld" --kube-subnet-mgr \
      --kubeconfig-file "$STATE/flannel.kubeconfig" --iface eth0 --ip-masq=false \
      --net-config-path "$STATE/flannel-net.json" --subnet-file "$RUN/n$i/flannel/subnet.env"
  done
  for ((i = 1; i <= n; i++)); do
    sub=$RUN/n$i/flannel/subnet.env
    until [ -s "$sub" ]; do
      alive "flanneld-$i" || fail_with_log "flanneld-$i"
      [ "$(date +%s)" -lt "$deadline" ] || fail_with_log "flanneld-$i"
      sleep 1
    done
    # ipMasq false: left out, the plugin would have the bridge masquerade pod traffic to other
    # nodes (flanneld runs without --ip-masq), and pods would not see each other's addresses.
    cat >"$(cni_conf "$i").new" <<EOF
{
  "cniVersion": "0.3.1",
  "name": "$CNI_NET_NAME",
  "plugins": [
    {"type": "flannel", "subnetFile": "$sub", "dataDir": "/var/lib/cni/flannel",
     "delegate": {"hairpinMode": true, "isDefaultGateway": true, "ipMasq": false}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
    install_new "$(cni_conf "$i")" >/dev/null
  done
}
