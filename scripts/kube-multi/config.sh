# shellcheck shell=bash
# Certificates and configuration files of the multi-node cluster, for scripts/kube-multi.sh
# (sourced; uses its variables and kube-local.sh's make_pki, cert and install_new).

api_addr() { node_addr 1; }   # the control plane runs in node 1

# kubeconfig FILE CERTNAME: a kubeconfig for an identity, server node 1's address. It replaces
# kube-local.sh's own (127.0.0.1, context boxbench-local), so that kube-local.sh's make_pki
# writes this cluster's kubeconfigs.
kubeconfig() {
  cat >"$1.new" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $CONTEXT
  cluster:
    certificate-authority: $PKI/ca.crt
    server: https://$(api_addr):6443
users:
- name: $CONTEXT-$2
  user:
    client-certificate: $PKI/$2.crt
    client-key: $PKI/$2.key
contexts:
- name: $CONTEXT
  context: {cluster: $CONTEXT, user: $CONTEXT-$2}
current-context: $CONTEXT
EOF
  chmod 600 "$1.new"
  install_new "$1" >/dev/null
}

# make_multi_pki N: kube-local.sh's certificates and kubeconfigs (a CA of this cluster's own
# under $PKI; the apiserver's names include node 1's address), and what only this cluster has:
# one kubelet identity per node, flanneld's and cilium-agent's.
make_multi_pki() {
  local n=$1 i
  make_pki "$(api_addr)"
  rm -f "$STATE/kubelet.kubeconfig" "$PKI"/kubelet.*   # make_pki's one node; each node has its own
  for ((i = 1; i <= n; i++)); do
    cert "kubelet-$i" "system:node:$(node_name "$i")" system:nodes
    kubeconfig "$STATE/kubelet-$i.kubeconfig" "kubelet-$i"
  done
  cert flannel boxbench-flannel ""
  kubeconfig "$STATE/flannel.kubeconfig" flannel
  cert cilium boxbench-cilium ""
  kubeconfig "$STATE/cilium.kubeconfig" cilium
  chmod 600 "$PKI"/*.key
}

# node_configs I CNI: node I's containerd, kubelet and kube-proxy configuration.
node_configs() {
  local i=$1 cni=$2 d name bindir=/usr/lib/cni
  d=$(node_dir "$i")
  name=$(node_name "$i")
  [ "$cni" = routes ] || bindir=$CNI_BIN   # Debian's plugins and flannel's or cilium's
  mkdir -p "$d/containerd" "$d/kubelet"
  {
    echo "# containerd of node $name: its own root, state and socket."
    containerd_config "$d/containerd" "$RUN/n$i/containerd-state" "$(node_sock "$i")" "$RUN/n$i/runc" "$bindir" /etc/cni/net.d
  } >"$d/containerd/config.toml.new"
  install_new "$d/containerd/config.toml" >/dev/null

  cat >"$d/kubelet/config.yaml.new" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(node_addr "$i")
port: 10250
healthzBindAddress: 127.0.0.1
healthzPort: 10248
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$(node_sock "$i")
cgroupDriver: cgroupfs
cgroupsPerQOS: true
cgroupRoot: $CGROUP_BASE/n$i
failCgroupV1: false
failSwapOn: false
memorySwap: {swapBehavior: NoSwap}
protectKernelDefaults: false
enforceNodeAllocatable: [pods]
clusterDomain: cluster.local
clusterDNS: [$DNS_IP]
resolvConf: /etc/resolv.conf
serializeImagePulls: false
maxPods: 110
podLogsDir: /var/log/pods
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
rotateCertificates: false
serverTLSBootstrap: false
EOF
  [ -z "$(install_new "$d/kubelet/config.yaml")" ] || stop "kubelet-$i" 30

  # The nodes share one kernel (as kind's do): kube-proxy leaves its conntrack table alone.
  kube_proxy_config "$name" >"$d/kube-proxy.yaml.new"
  [ -z "$(install_new "$d/kube-proxy.yaml")" ] || stop "kube-proxy-$i"
}
