#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this host, for boxbench's tests and for users without
# a cluster. See docs/kubernetes.md ("The local cluster").
#
#   scripts/kube-local.sh build    build (or reuse) the pinned release's components
#   scripts/kube-local.sh up       build if needed, start everything, wait until a pod runs
#   scripts/kube-local.sh status   print the state; exit 0 iff the cluster is up and the node Ready
#   scripts/kube-local.sh down     stop everything it started and remove everything it created
#
# The components (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy
# and kubectl) are built from source through the Go module proxy into one multiplexing binary
# (scripts/kube-local/), cached under /var/cache/boxbench/kube/<version>/ by the hash of the
# wrapper's sources. etcd, containerd, runc and the CNI plugins are Debian's.
#
# Everything the cluster creates lives under /var/lib/boxbench/kube, /run/boxbench/kube and
# /var/log/boxbench-kube, a bridge named bbkube0, the cgroup subtree /boxbench-kube, kube-proxy's
# KUBE-* iptables chains and a few kernel tunables whose previous values are saved and restored.
# Processes are started here and ended by the PIDs in this script's own pidfiles.
set -euo pipefail

# ---- the contract other code relies on (docs/kubernetes.md) ------------------------------------
KUBE_VERSION=v1.34.4          # k8s.io/kubernetes; staging modules at v0.34.4
STATE=/var/lib/boxbench/kube
RUN=/run/boxbench/kube
LOGS=/var/log/boxbench-kube
CACHE=${BOXBENCH_CACHE:-/var/cache/boxbench}/kube   # BOXBENCH_CACHE moves every build cache (docs/ci.md)
KUBECONFIG_ADMIN=$STATE/admin.kubeconfig
NODE_NAME=boxbench-node
CONTAINERD_SOCK=$RUN/containerd/containerd.sock
POD_CIDR=10.244.0.0/16        # the whole pod network (kube-proxy's --cluster-cidr)
NODE_POD_CIDR=10.244.0.0/24   # this node's share, handed out by host-local IPAM
BRIDGE=bbkube0
BRIDGE_IP=10.244.0.1
SERVICE_CIDR=10.96.0.0/16
SERVICE_API_IP=10.96.0.1      # the "kubernetes" Service
APISERVER_PORT=6443
ETCD_CLIENT_PORT=12379        # not etcd's default ports: never meet another etcd on this host
ETCD_PEER_PORT=12380
PAUSE_IMAGE=boxbench.local/pause:3.10
CGROUP_ROOT=/boxbench-kube    # kubelet's cgroupRoot: every pod cgroup lives below it
CNI_NET_NAME=boxbench-kube
CNI_BIN_DIR=/usr/lib/cni      # Debian's containernetworking-plugins
RUNSC_CACHE=${BOXBENCH_CACHE:-/var/cache/boxbench}/runsc

UP_TIMEOUT=${KUBE_LOCAL_UP_TIMEOUT:-300}   # seconds for the whole wait after the build

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/kube-local
PIDS=$RUN/pids
PKI=$STATE/pki
BIN=$RUN/bin                  # symlinks named after each component to the cached binary

# Kernel tunables this cluster changes (kubelet sets the first six when protectKernelDefaults
# is false; the bridge/forwarding ones are needed for pod and Service traffic). Their values
# before the first `up` are saved and restored by `down`.
SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
         kernel.keys.root_maxkeys kernel.keys.root_maxbytes
         net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
         net.ipv4.ip_forward net.ipv4.conf.all.route_localnet)

log() { printf 'kube-local: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (it starts kubelet, containerd and changes iptables)"

# ---- build ----------------------------------------------------------------------------------

# The cache key: the version and the hash of everything that decides the binary.
build_key() {
  (cd "$SRC" && cat go.mod go.sum main.go && go env GOVERSION && echo "$(build_flags)") |
    sha256sum | cut -c1-16
}

build_flags() {
  local minor ld p
  minor=$(echo "$KUBE_VERSION" | cut -d. -f2)
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  printf '%s' "$ld"
}

kube_binary() { echo "$CACHE/$KUBE_VERSION/bin-$(build_key)/kube"; }

cmd_build() {
  command -v go >/dev/null || die "go is not installed (the components are built from source)"
  local out dir start tmp
  out=$(kube_binary)
  dir=$(dirname "$out")
  mkdir -p "$CACHE/$KUBE_VERSION"
  exec 9>"$CACHE/$KUBE_VERSION/build.lock"
  flock 9
  if [ -x "$out" ]; then
    log "components $KUBE_VERSION cached at $out"
  else
    log "building the components of Kubernetes $KUBE_VERSION from source (cold: tens of minutes on 2 cores)"
    start=$(date +%s)
    tmp=$(mktemp -d "$CACHE/$KUBE_VERSION/tmp.XXXXXX")
    # Its own build cache: a warm rebuild after a wrapper change only links, and the shared
    # default cache is not filled with gigabytes of Kubernetes objects.
    # -s -w (no symbol table, no DWARF) shortens the link and halves the binary; providerless
    # leaves out what remains of the in-tree cloud providers.
    (cd "$SRC" && GOCACHE=$CACHE/go-build GOFLAGS=-mod=readonly CGO_ENABLED=1 \
      go build -trimpath -tags providerless -ldflags "$(build_flags)" -o "$tmp/kube" .) ||
      { rm -rf "$tmp"; die "build failed"; }
    mkdir -p "$dir"
    mv "$tmp/kube" "$out"
    rmdir "$tmp"
    log "built in $(( $(date +%s) - start )) s: $out"
  fi
  build_pause
  flock -u 9
  exec 9>&-   # the daemons started next must not inherit it
}

# The sandbox ("pause") image, built offline: upstream's pause.c from the same kubernetes module,
# compiled static, in a one-layer image archive that `ctr images import` reads.
pause_tar() { echo "$CACHE/$KUBE_VERSION/pause-3.10.tar"; }

build_pause() {
  local tar src work lsha csha diff
  tar=$(pause_tar)
  [ -s "$tar" ] && return 0
  command -v gcc >/dev/null || die "gcc is not installed (it compiles the pause program)"
  src=$(cd "$SRC" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c
  [ -f "$src" ] || (cd "$SRC" && go mod download k8s.io/kubernetes)
  [ -f "$src" ] || die "pause.c not found in the kubernetes module ($src)"
  work=$(mktemp -d)
  mkdir -p "$work/root"
  gcc -Os -Wall -Werror -static -DVERSION="3.10-boxbench" -o "$work/root/pause" "$src"
  strip "$work/root/pause"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/root" -cf "$work/layer.tar" pause
  lsha=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
  diff="sha256:$lsha"
  cat >"$work/config.json" <<JSON
{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["$diff"]},"history":[{"created_by":"boxbench kube-local.sh: pause.c compiled static"}]}
JSON
  csha=$(sha256sum "$work/config.json" | cut -d' ' -f1)
  mkdir -p "$work/img/$lsha"
  mv "$work/layer.tar" "$work/img/$lsha/layer.tar"
  mv "$work/config.json" "$work/img/$csha.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]\n' "$csha" "$PAUSE_IMAGE" "$lsha" >"$work/img/manifest.json"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/img" -cf "$tar.tmp" .
  mv "$tar.tmp" "$tar"
  rm -rf "$work"
  log "pause image built: $tar"
}

# ---- processes ------------------------------------------------------------------------------

# A pidfile holds "PID STARTTIME": the start time (field 22 of /proc/PID/stat) tells our process
# from an unrelated one that got the same PID after ours exited.
proc_start() { awk '{sub(/^.*\) /, ""); print $20}' "/proc/$1/stat" 2>/dev/null; }

# alive NAME: exit 0 if the process in NAME's pidfile is still ours and running.
alive() {
  local f=$PIDS/$1.pid pid st
  [ -f "$f" ] || return 1
  read -r pid st <"$f" || return 1
  [ -n "$pid" ] && [ "$(proc_start "$pid")" = "$st" ]
}

pid_of() { cut -d' ' -f1 "$PIDS/$1.pid"; }

# start NAME CMD...: start CMD detached, its output in $LOGS/NAME.log, unless it already runs.
start() {
  local name=$1 pid
  shift
  if alive "$name"; then
    log "$name already running (pid $(pid_of "$name"))"
    return 0
  fi
  mkdir -p "$PIDS" "$LOGS"
  # A daemon keeps no descriptor of its caller (a CI runner's pipe held open would make the
  # caller wait for it): bash closes every one above 2, then becomes the daemon (same PID).
  # shellcheck disable=SC2016
  setsid bash -c 'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; exec "$@"' \
    kube-local "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid $(proc_start "$pid")" >"$PIDS/$name.pid"
  log "$name started (pid $pid, log $LOGS/$name.log)"
}

# stop NAME [SECONDS]: TERM the process of NAME's pidfile, KILL it after SECONDS.
stop() {
  local name=$1 wait=${2:-20} pid i
  if alive "$name"; then
    pid=$(pid_of "$name")
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < wait * 10; i++)); do
      alive "$name" || break
      sleep 0.1
    done
    if alive "$name"; then
      log "$name (pid $pid) did not stop in ${wait}s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
    fi
    log "$name stopped"
  fi
  rm -f "$PIDS/$name.pid"
}

fail_with_log() {
  log "$1 is not running or not healthy; last lines of $LOGS/$1.log:"
  tail -n 25 "$LOGS/$1.log" >&2 || true
  exit 1
}

# wait_for NAME SECONDS TEST...: poll TEST until it succeeds, NAME's process is gone, or time
# runs out.
wait_for() {
  local name=$1 secs=$2 i
  shift 2
  for ((i = 0; i < secs * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    alive "$name" || fail_with_log "$name"
    sleep 0.5
  done
  fail_with_log "$name"
}

kubectl() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# ---- certificates and configuration ---------------------------------------------------------

node_ip() {
  local dev
  dev=$(ip -4 route show default | awk '{for (i = 1; i < NF; i++) if ($i == "dev") {print $(i+1); exit}}')
  if [ -n "$dev" ]; then
    ip -4 -o addr show dev "$dev" scope global | awk '{split($4, a, "/"); print a[1]; exit}'
  else
    # No default route: the first global address that is not one of Docker's or ours.
    ip -4 -o addr show scope global | awk -v b="$BRIDGE" '$2 != b && $2 !~ /^(docker|br-)/ {split($4, a, "/"); print a[1]; exit}'
  fi
}

# cert NAME CN O [SAN]: a client (or, with SAN, serving) certificate signed by the cluster CA.
cert() {
  local name=$1 cn=$2 o=$3 san=${4:-} subj ext
  [ -s "$PKI/$name.crt" ] && return 0
  subj="/CN=$cn"
  [ -n "$o" ] && subj="/O=$o$subj"
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
  ext=$PKI/$name.ext
  if [ -n "$san" ]; then
    printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=%s\n' "$san" >"$ext"
  else
    printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >"$ext"
  fi
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$ext"
}

kubeconfig() { # kubeconfig FILE CERTNAME
  cat >"$1.new" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: boxbench-local
  cluster:
    certificate-authority: $PKI/ca.crt
    server: https://127.0.0.1:$APISERVER_PORT
users:
- name: $2
  user:
    client-certificate: $PKI/$2.crt
    client-key: $PKI/$2.key
contexts:
- name: boxbench-local
  context: {cluster: boxbench-local, user: $2}
current-context: boxbench-local
EOF
  chmod 600 "$1.new"
  install_new "$1" >/dev/null
}

# install_new FILE: move FILE.new over FILE if they differ (a component that watches FILE, like
# kube-proxy, exits on any write). Prints "changed" if it did.
install_new() {
  if cmp -s "$1.new" "$1"; then
    rm -f "$1.new"
  else
    mv "$1.new" "$1"
    echo changed
  fi
}

make_pki() {
  local ip=$1
  mkdir -p "$PKI"
  chmod 700 "$PKI"
  if [ ! -s "$PKI/ca.crt" ]; then
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=boxbench-local-ca" -days 3650 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
      -out "$PKI/ca.crt" 2>/dev/null
  fi
  cert etcd-server etcd "" "IP:127.0.0.1,DNS:localhost"
  cert etcd-client kube-apiserver-etcd-client ""
  cert apiserver kube-apiserver "" \
    "IP:127.0.0.1,IP:$SERVICE_API_IP,IP:$ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  cert admin boxbench-admin system:masters
  cert controller-manager system:kube-controller-manager ""
  cert scheduler system:kube-scheduler ""
  cert kubelet "system:node:$NODE_NAME" system:nodes
  cert kube-proxy system:kube-proxy ""
  if [ ! -s "$PKI/sa.key" ]; then
    openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
    openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  fi
  chmod 600 "$PKI"/*.key
  kubeconfig "$KUBECONFIG_ADMIN" admin
  kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager
  kubeconfig "$STATE/scheduler.kubeconfig" scheduler
  kubeconfig "$STATE/kubelet.kubeconfig" kubelet
  kubeconfig "$STATE/kube-proxy.kubeconfig" kube-proxy
}

# The gVisor hook: when the runsc helper's build (runsc and containerd-shim-runsc-v1 under
# $RUNSC_CACHE/<version>/) is present, containerd gets a "runsc" handler and the cluster a
# RuntimeClass "runsc". KUBE_LOCAL_RUNSC_DIR names one directory explicitly.
runsc_dir() {
  local d
  if [ -n "${KUBE_LOCAL_RUNSC_DIR:-}" ]; then
    d=$KUBE_LOCAL_RUNSC_DIR
  else
    d=$(ls -d "$RUNSC_CACHE"/*/ 2>/dev/null | sort -V | tail -n 1)
    d=${d%/}
  fi
  [ -n "$d" ] && [ -x "$d/containerd-shim-runsc-v1" ] && [ -x "$d/runsc" ] && echo "$d"
  return 0
}

# kube_proxy_config NODE: prints the kube-proxy configuration of node NODE of a boxbench cluster
# (the local one or a multi-node one; its kubeconfig is $STATE/kube-proxy.kubeconfig).
kube_proxy_config() {
  cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $STATE/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# NodePorts on the node's addresses, not on 127.0.0.1 (that needs route_localnet=1 host-wide).
nodePortAddresses: [primary]
iptables: {localhostNodePorts: false, masqueradeAll: false}
# 0: leave the host's conntrack table size and timeouts alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

# containerd_config DIR STATE SOCK RUNC_ROOT CNI_BIN CNI_CONF: prints the body of a containerd
# (config version 2) of a boxbench cluster, the local one's or a multi-node node's: root DIR/root
# and plugins DIR/opt, state STATE, socket SOCK, runc's state RUNC_ROOT, the CRI with runc on
# overlayfs and the one CNI config in CNI_CONF (plugins in CNI_BIN). The caller writes a first
# comment line naming whose containerd it is, and may append runtimes.
containerd_config() {
  local dir=$1 state=$2 sock=$3 runc_root=$4 cni_bin=$5 cni_conf=$6 restrict=false
  # Bit 24 of the effective capabilities is CAP_SYS_RESOURCE.
  (( (0x$(awk '/^CapEff/ {print $2}' /proc/self/status) >> 24) & 1 )) || restrict=true
  cat <<EOF
version = 2
root = "$dir/root"
state = "$state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$sock"

[ttrpc]
  address = "$sock.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  netns_mounts_under_state_dir = true
  # The CRI lowers a sandbox's oom_score_adj to -998 (and the kubelet asks -997 for Guaranteed
  # pods); that needs CAP_SYS_RESOURCE, which root lacks in some sandboxed hosts (this one), and
  # runc then fails with "can't get final child's PID from pipe". Restricted, no container goes
  # below containerd's own score.
  restrict_oom_score_adj = $restrict
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$cni_bin"
    conf_dir = "$cni_conf"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$runc_root"
EOF
}

write_configs() {
  local ip=$1 rdir=$2
  mkdir -p "$STATE/containerd" "$RUN/containerd" "$STATE/cni/net.d" "$STATE/kubelet"
  {
    echo "# containerd for the boxbench local cluster: its own root, state and socket (never dockerd's)."
    containerd_config "$STATE/containerd" "$RUN/containerd/state" "$CONTAINERD_SOCK" "$RUN/runc" "$CNI_BIN_DIR" "$STATE/cni/net.d"
  } >"$STATE/containerd/config.toml.new"
  if [ -n "$rdir" ]; then
    cat >>"$STATE/containerd/config.toml.new" <<EOF
    # gVisor, from $rdir (the runsc helper's build); RuntimeClass "runsc".
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runsc.v1"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc.options]
        TypeUrl = "io.containerd.runsc.v1.options"
        ConfigPath = "$STATE/containerd/runsc.toml"
EOF
    cat >"$STATE/containerd/runsc.toml.new" <<EOF
binary_name = "$rdir/runsc"
root = "$RUN/runsc"
log_level = "info"
log_path = "$LOGS/runsc/%ID%/shim.log"
[runsc_config]
  debug-log = "$LOGS/runsc/%ID%/"
EOF
    mkdir -p "$LOGS/runsc"
  fi
  # containerd reads its configuration only when it starts: a running one keeps what it has.
  local f
  for f in config.toml runsc.toml; do
    if [ ! -f "$STATE/containerd/$f.new" ]; then
      alive containerd || rm -f "$STATE/containerd/$f"
    elif alive containerd && ! cmp -s "$STATE/containerd/$f.new" "$STATE/containerd/$f"; then
      log "warning: containerd runs with an older $f (gVisor found or lost since?); run down and up to apply it"
      rm -f "$STATE/containerd/$f.new"
    else
      mv "$STATE/containerd/$f.new" "$STATE/containerd/$f"
    fi
  done

  # A bridge pod network: bridge + host-local IPAM (its allocations under our state) + portmap
  # + firewall, and loopback (containerd adds lo itself). No masquerade: pods need not leave the
  # host. The firewall plugin accepts forwarded traffic to and from each pod's address: dockerd
  # sets the FORWARD policy to DROP, and with br_netfilter on, pod-to-pod traffic across the
  # bridge (and a ClusterIP DNATed to another pod) is forwarded traffic.
  cat >"$STATE/cni/net.d/10-boxbench-kube.conflist.new" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$CNI_NET_NAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/ipam",
        "ranges": [[{"subnet": "$NODE_POD_CIDR", "gateway": "$BRIDGE_IP"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "firewall", "backend": "iptables"}
  ]
}
EOF

  cat >"$STATE/kubelet/config.yaml.new" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 0.0.0.0
port: 10250
healthzBindAddress: 127.0.0.1
healthzPort: 10248
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
cgroupsPerQOS: true
cgroupRoot: $CGROUP_ROOT
failCgroupV1: false
failSwapOn: false
memorySwap: {swapBehavior: NoSwap}
protectKernelDefaults: false
enforceNodeAllocatable: [pods]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
maxPods: 110
podLogsDir: $LOGS/pods
# A shared CI disk: no evictions or image GC because of how full the host's disk is.
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
rotateCertificates: false
serverTLSBootstrap: false
EOF

  kube_proxy_config "$NODE_NAME" >"$STATE/kube-proxy.yaml.new"
  install_new "$STATE/cni/net.d/10-boxbench-kube.conflist" >/dev/null
  # A running kubelet or kube-proxy whose configuration changed is restarted by `up`.
  [ -z "$(install_new "$STATE/kubelet/config.yaml")" ] || stop kubelet 30
  [ -z "$(install_new "$STATE/kube-proxy.yaml")" ] || stop kube-proxy
}

# Directories outside our own that the kubelet, containerd or the CNI plugins create when absent.
# Which of them did not exist before the first `up` is recorded; `down` removes those again if
# they hold nothing but what the cluster put there (and never removes anything else in them).
HOST_DIRS=(/var/lib/cni /var/log/containers /var/log/pods /var/run/netns /run/kubernetes
           /var/lib/kubelet /etc/cni /opt/cni /etc/kubernetes)

save_host_dirs() {
  local f=$STATE/hostdirs.absent d
  [ -f "$f" ] && return 0
  for d in "${HOST_DIRS[@]}"; do
    [ -e "$d" ] || echo "$d"
  done >"$f.tmp"
  mv "$f.tmp" "$f"
}

restore_host_dirs() {
  local l d
  # The kubelet's /var/log/containers links to the logs of our pods.
  for l in /var/log/containers/*; do
    [ -L "$l" ] || continue
    case $(readlink "$l") in "$LOGS"/*) rm -f "$l" ;; esac
  done
  rm -f /var/lib/cni/results/"$CNI_NET_NAME"-* 2>/dev/null || true
  [ -f "$STATE/hostdirs.absent" ] || return 0
  # The kubelet's device-plugin socket has a fixed path, whatever its --root-dir.
  if grep -qxF /var/lib/kubelet "$STATE/hostdirs.absent"; then
    rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/DEPRECATION
  fi
  while IFS= read -r d; do
    [ -d "$d" ] || continue
    find "$d" -depth -type d -empty -delete 2>/dev/null || true
    [ -e "$d" ] && log "$d was created while the cluster ran but is not empty; left in place"
  done <"$STATE/hostdirs.absent"
  return 0
}

save_sysctls() {
  local f=$STATE/sysctl.saved k
  [ -f "$f" ] && return 0
  for k in "${SYSCTLS[@]}"; do
    if sysctl -n "$k" >/dev/null 2>&1; then
      echo "$k=$(sysctl -n "$k")"
    fi
  done >"$f.tmp"
  mv "$f.tmp" "$f"
}

# ---- up -------------------------------------------------------------------------------------

cmd_up() {
  local ip rdir kube deadline need=()
  for c in etcd containerd ctr runc openssl iptables ip conntrack gcc; do
    command -v "$c" >/dev/null || need+=("$c")
  done
  for p in bridge host-local portmap loopback; do
    [ -x "$CNI_BIN_DIR/$p" ] || need+=("cni:$p")
  done
  [ ${#need[@]} -eq 0 ] || die "missing: ${need[*]} (install etcd-server containerd runc openssl iptables iproute2 conntrack gcc containernetworking-plugins; scripts/setup.sh does)"

  cmd_build
  kube=$(kube_binary)
  ip=$(node_ip)
  [ -n "$ip" ] || die "no global IPv4 address for the node's InternalIP (none on the default route's interface, none elsewhere)"
  rdir=$(runsc_dir)

  mkdir -p "$STATE" "$RUN" "$LOGS" "$PIDS" "$BIN"
  chmod 700 "$STATE"
  for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
    ln -sfn "$kube" "$BIN/$c"
  done
  save_sysctls
  save_host_dirs
  save_kube_chains
  make_pki "$ip"
  write_configs "$ip" "$rdir"

  # Pod traffic crosses a bridge and is DNATed by kube-proxy's iptables rules.
  local k
  for k in net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables; do
    sysctl -qw "$k=1" 2>/dev/null || log "warning: cannot set $k=1 (is br_netfilter in this kernel?); Services may not work"
  done

  start etcd etcd --name boxbench-kube --data-dir "$STATE/etcd" \
    --listen-client-urls "https://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "https://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "https://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "https://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "boxbench-kube=https://127.0.0.1:$ETCD_PEER_PORT" --logger zap --log-outputs stderr \
    --cert-file "$PKI/etcd-server.crt" --key-file "$PKI/etcd-server.key" --client-cert-auth --trusted-ca-file "$PKI/ca.crt" \
    --peer-cert-file "$PKI/etcd-server.crt" --peer-key-file "$PKI/etcd-server.key" --peer-client-cert-auth --peer-trusted-ca-file "$PKI/ca.crt" \
    --enable-v2=false --quota-backend-bytes 2147483648
  # containerd finds a shim by its name on its PATH: gVisor's is in the runsc helper's cache.
  local cpath=$PATH
  if [ -n "$rdir" ] && grep -q 'runtimes.runsc]' "$STATE/containerd/config.toml"; then
    cpath=$rdir:$PATH
  fi
  start containerd env PATH="$cpath" containerd --config "$STATE/containerd/config.toml"

  start kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers "https://127.0.0.1:$ETCD_CLIENT_PORT" --etcd-cafile "$PKI/ca.crt" \
    --etcd-certfile "$PKI/etcd-client.crt" --etcd-keyfile "$PKI/etcd-client.key" \
    --bind-address 0.0.0.0 --secure-port "$APISERVER_PORT" --advertise-address "$ip" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" --anonymous-auth=false \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP,Hostname \
    --service-cluster-ip-range "$SERVICE_CIDR" --service-node-port-range 30000-32767 \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --allow-privileged=true --profiling=false --event-ttl 1h

  wait_for containerd 60 ctr --address "$CONTAINERD_SOCK" version
  if ! ctr --address "$CONTAINERD_SOCK" -n k8s.io images ls -q | grep -xF "$PAUSE_IMAGE" >/dev/null; then
    ctr --address "$CONTAINERD_SOCK" -n k8s.io images import "$(pause_tar)" >/dev/null
    log "pause image imported into the cluster's containerd"
  fi

  wait_for etcd 60 curl -sf --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/etcd-client.crt" \
    --key "$PKI/etcd-client.key" "https://127.0.0.1:$ETCD_CLIENT_PORT/health"
  wait_for kube-apiserver 180 kubectl get --raw /readyz

  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --allocate-node-cidrs=false \
    --profiling=false
  start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig "$STATE/scheduler.kubeconfig" \
    --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false
  make_cgroup_root
  start kubelet "$BIN/kubelet" --config "$STATE/kubelet/config.yaml" \
    --kubeconfig "$STATE/kubelet.kubeconfig" --root-dir "$STATE/kubelet/root" \
    --hostname-override "$NODE_NAME" --node-ip "$ip" --cert-dir "$STATE/kubelet/pki" \
    --pod-infra-container-image "$PAUSE_IMAGE"
  start kube-proxy "$BIN/kube-proxy" --config "$STATE/kube-proxy.yaml"

  deadline=$(( $(date +%s) + UP_TIMEOUT ))
  log "waiting for node $NODE_NAME to be Ready"
  until [ "$(node_ready)" = True ]; do
    for c in etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
      alive "$c" || fail_with_log "$c"
    done
    [ "$(date +%s)" -lt "$deadline" ] || fail_with_log kubelet
    sleep 1
  done

  smoke_test "$deadline" kube-local-smoke "" || {
    sed 's/^/  /' "$RUN/smoke.why" >&2
    fail_with_log kubelet
  }
  runsc_class "$deadline"
  log "up: kubeconfig $KUBECONFIG_ADMIN, node $NODE_NAME Ready; $BIN/kubectl is kubectl"
}

node_ready() {
  kubectl get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true
}

# smoke_test DEADLINE NAME RUNTIMECLASS: a pod runs on the pod network (the pause image, which
# needs no registry). Returns 1 (after printing why) if it is not Ready by DEADLINE.
smoke_test() {
  local deadline=$1 name=$2 rc=$3 phase
  kubectl -n default delete pod "$name" --ignore-not-found --wait=true >/dev/null
  # Right after the first start the namespace's default ServiceAccount may not exist yet.
  until kubectl -n default apply -f - >/dev/null 2>"$RUN/smoke.err" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $name, labels: {boxbench.io/kube-local: "true"}}
spec:
  ${rc:+runtimeClassName: $rc}
  dnsPolicy: Default   # no cluster DNS here
  containers:
  - {name: pause, image: $PAUSE_IMAGE, imagePullPolicy: Never}
  terminationGracePeriodSeconds: 0
EOF
  do
    [ "$(date +%s)" -lt "$deadline" ] || { cat "$RUN/smoke.err" >&2; die "could not create the smoke pod"; }
    sleep 1
  done
  until [ "$(kubectl -n default get pod "$name" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; do
    # With a RuntimeClass, a sandbox that failed to start is the answer: do not wait for more.
    if [ "$(date +%s)" -ge "$deadline" ] || { [ -n "$rc" ] && kubectl -n default get events \
        --field-selector "involvedObject.name=$name,reason=FailedCreatePodSandBox" -o name 2>/dev/null | grep -q .; }; then
      kubectl -n default get events --field-selector "involvedObject.name=$name,type=Warning" \
        -o 'jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}' 2>/dev/null |
        awk '/^FailedCreatePodSandBox/ {print; next} {rest = rest $0 "\n"} END {printf "%s", rest}' |
        head -n 3 >"$RUN/smoke.why" || true
      kubectl -n default delete pod "$name" --grace-period=0 --force >/dev/null 2>&1 || true
      return 1
    fi
    sleep 1
  done
  phase=$(kubectl -n default get pod "$name" -o 'jsonpath={.status.phase} {.status.podIP}')
  log "smoke pod $name${rc:+ (RuntimeClass $rc)}: $phase"
  kubectl -n default delete pod "$name" --wait=true >/dev/null
}

# The RuntimeClass runsc exists only if containerd has the handler and a pod runs with it.
runsc_class() {
  local deadline=$1
  if ! grep -q 'runtimes.runsc]' "$STATE/containerd/config.toml"; then
    rm -f "$STATE/runsc.unavailable"
    kubectl delete runtimeclass runsc --ignore-not-found >/dev/null
    return 0
  fi
  # The verdict holds for as long as the same containerd runs (a failed probe costs a minute).
  if [ -f "$STATE/runsc.unavailable" ] && cmp -s "$STATE/runsc.probed" "$PIDS/containerd.pid"; then
    log "warning: gVisor is configured but unusable (see status); no RuntimeClass runsc"
    return 0
  fi
  rm -f "$STATE/runsc.unavailable"
  cp "$PIDS/containerd.pid" "$STATE/runsc.probed"
  kubectl apply -f - >/dev/null <<EOF
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: runsc, labels: {boxbench.io/kube-local: "true"}}
handler: runsc
EOF
  # Bounded on its own: gVisor's absence must not fail `up`.
  if smoke_test "$(( $(date +%s) + 60 < deadline ? $(date +%s) + 60 : deadline ))" kube-local-smoke-runsc runsc; then
    log "gVisor: RuntimeClass runsc ($(sed -n 's/^binary_name = //p' "$STATE/containerd/runsc.toml"))"
  else
    kubectl delete runtimeclass runsc --ignore-not-found >/dev/null
    cp "$RUN/smoke.why" "$STATE/runsc.unavailable"
    log "warning: gVisor is configured but a pod does not run with it; no RuntimeClass runsc. Why:"
    sed 's/^/  /' "$STATE/runsc.unavailable" >&2
  fi
}

# ---- status ---------------------------------------------------------------------------------

cmd_status() {
  local c ok=0 r
  for c in etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
    if alive "$c"; then
      printf '%-24s running (pid %s)\n' "$c" "$(pid_of "$c")"
    else
      printf '%-24s not running\n' "$c"
      ok=1
    fi
  done
  if [ -x "$BIN/kubectl" ] && [ -f "$KUBECONFIG_ADMIN" ]; then
    r=$(timeout 20 "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" --request-timeout 10s get node "$NODE_NAME" \
      -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
    printf '%-24s %s\n' "node $NODE_NAME" "Ready=${r:-unknown}"
    [ "$r" = True ] || ok=1
  else
    printf '%-24s %s\n' "node $NODE_NAME" "no kubeconfig"
    ok=1
  fi
  printf '%-24s %s\n' kubeconfig "$KUBECONFIG_ADMIN"
  printf '%-24s %s\n' kubectl "$BIN/kubectl (Kubernetes $KUBE_VERSION)"
  printf '%-24s %s\n' containerd "$CONTAINERD_SOCK (namespace k8s.io)"
  printf '%-24s pods %s, services %s\n' networks "$POD_CIDR" "$SERVICE_CIDR"
  if [ -f "$STATE/runsc.unavailable" ]; then
    printf '%-24s %s\n' gVisor "configured but unusable, no RuntimeClass: $(head -n 1 "$STATE/runsc.unavailable")"
  elif [ -f "$STATE/containerd/runsc.toml" ]; then
    printf '%-24s %s\n' gVisor "RuntimeClass runsc"
  else
    printf '%-24s %s\n' gVisor "not found, no RuntimeClass"
  fi
  return $ok
}

# ---- down -----------------------------------------------------------------------------------

ctr_k8s() { ctr --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }

cmd_down() {
  local i t m
  # 1. No new pods: stop the controllers, then delete every pod so that the kubelet stops each
  #    sandbox through the CRI (which runs the CNI DEL: veth, IP, portmap rules).
  stop kube-controller-manager
  stop kube-scheduler
  if alive kube-apiserver && alive kubelet && [ -x "$BIN/kubectl" ]; then
    timeout 60 "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" delete pods --all --all-namespaces \
      --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
    for ((i = 0; i < 120; i++)); do
      [ -z "$(ctr_k8s tasks ls -q 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  stop kubelet 30
  stop kube-proxy
  stop kube-apiserver 30
  stop etcd

  # 2. Whatever the kubelet did not stop: kill the tasks through our containerd, then stop it.
  if alive containerd; then
    for t in $(ctr_k8s tasks ls -q 2>/dev/null); do
      ctr_k8s tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
    done
    sleep 1
    for t in $(ctr_k8s tasks ls -q 2>/dev/null); do
      ctr_k8s tasks delete -f "$t" >/dev/null 2>&1 || true
    done
    for t in $(ctr_k8s containers ls -q 2>/dev/null); do
      ctr_k8s containers delete "$t" >/dev/null 2>&1 || true
    done
  fi
  stop containerd 30
  stop_our_shims

  # 3. kube-proxy's chains (its own --cleanup), then the CNI portmap chains if no one else's
  #    rules are left in them.
  if [ -x "$BIN/kube-proxy" ]; then
    "$BIN/kube-proxy" --cleanup >>"$LOGS/kube-proxy-cleanup.log" 2>&1 || log "kube-proxy --cleanup reported errors (see $LOGS/kube-proxy-cleanup.log)"
  fi
  cleanup_kube_chains

  # 4. Mounts under our directories (deepest first), the bridge, our cgroups.
  for ((i = 0; i < 3; i++)); do
    m=$(findmnt -rn -o TARGET | awk -v a="$STATE/" -v b="$RUN/" 'index($0, a) == 1 || index($0, b) == 1' | sort -r)
    [ -z "$m" ] && break
    while read -r t; do
      [ -n "$t" ] && { umount "$t" 2>/dev/null || umount -l "$t" 2>/dev/null || true; }
    done <<<"$m"
  done
  ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE"
  remove_cgroups
  restore_host_dirs

  # 5. The kernel tunables as they were before the first `up`.
  if [ -f "$STATE/sysctl.saved" ]; then
    while IFS= read -r line; do
      [ -n "$line" ] && sysctl -qw "$line" 2>/dev/null || true
    done <"$STATE/sysctl.saved"
  fi

  # Never into a mount that would not go away: whatever is mounted there is left, and said.
  m=$(findmnt -rn -o TARGET | awk -v a="$STATE/" -v b="$RUN/" 'index($0, a) == 1 || index($0, b) == 1')
  [ -z "$m" ] || log "still mounted, left in place: $m"
  rm -rf --one-file-system "$STATE" "$RUN" "$LOGS"
  log "down: everything of the local cluster is removed (the build cache $CACHE stays)"
}

# containerd-shim-runc-v2 processes outlive containerd by design. Ours are the ones whose
# command line names our containerd's own socket; each is ended by its PID.
stop_our_shims() {
  local p cmd
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    case $cmd in
      *containerd-shim*" -address $CONTAINERD_SOCK "*)
        log "ending leftover shim pid ${p#/proc/}"
        kill -KILL "${p#/proc/}" 2>/dev/null || true ;;
    esac
  done
}

# KUBE-* and CNI-* chains: kube-proxy --cleanup removes its own, but the kubelet's
# (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT) and portmap's (CNI-HOSTPORT-*, and
# CNI-DN-* of a pod whose sandbox was not torn down) stay. Every such chain that did not exist
# before the first `up` is ours: the rules jumping to it are deleted, then it is flushed and
# deleted. One that existed before (another Kubernetes or CNI user on this host) is never
# touched.
kube_chains() {
  local ipt t
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for t in mangle nat filter; do
      "$ipt" -t "$t" -S 2>/dev/null | awk -v i="$ipt" -v t="$t" '$1 == "-N" && $2 ~ /^(KUBE|CNI)-/ {print i, t, $2}'
    done
  done
}

save_kube_chains() {
  [ -f "$STATE/chains.before" ] && return 0
  kube_chains >"$STATE/chains.tmp"
  mv "$STATE/chains.tmp" "$STATE/chains.before"
}

cleanup_kube_chains() {
  local ipt t ours script
  [ -f "$STATE/chains.before" ] || { log "no record of the KUBE-* chains before up; none removed"; return 0; }
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for t in mangle nat filter; do
      ours=$(kube_chains | grep -vxF -f "$STATE/chains.before" | awk -v i="$ipt" -v t="$t" '$1 == i && $2 == t {print $3}' || true)
      [ -n "$ours" ] || continue
      ours=$(echo "$ours" | sort -u)
      # iptables-restore parses the quoting of -S output (comments) exactly as it was printed.
      script=$(
        echo "*$t"
        "$ipt" -t "$t" -S | awk -v ours="$ours" '
          BEGIN { n = split(ours, a, "\n"); for (k = 1; k <= n; k++) mine[a[k]] = 1 }
          $1 == "-A" && !($2 in mine) { for (k = 3; k < NF; k++) if ($k == "-j" && ($(k+1) in mine)) { sub(/^-A/, "-D"); print; break } }'
        for c in $ours; do echo "-F $c"; done
        for c in $ours; do echo "-X $c"; done
        echo COMMIT
      )
      printf '%s\n' "$script" | "$ipt-restore" --noflush || log "could not remove $ipt $t chains: $(echo $ours)"
    done
  done
  return 0
}

# The kubelet's cgroupRoot must exist in every v1 hierarchy before it starts; cpuset needs its
# CPUs and memory nodes before any child can take a task.
v1_hierarchies() {
  awk '$3 == "cgroup" {print $2}' /proc/mounts
}

make_cgroup_root() {
  local h
  for h in $(v1_hierarchies); do
    mkdir -p "$h$CGROUP_ROOT"
    if [ -f "$h/cpuset.cpus" ]; then
      [ -s "$h$CGROUP_ROOT/cpuset.cpus" ] && [ -n "$(cat "$h$CGROUP_ROOT/cpuset.cpus")" ] || cat "$h/cpuset.cpus" >"$h$CGROUP_ROOT/cpuset.cpus"
      [ -n "$(cat "$h$CGROUP_ROOT/cpuset.mems")" ] || cat "$h/cpuset.mems" >"$h$CGROUP_ROOT/cpuset.mems"
    fi
  done
}

remove_cgroups() {
  local ctl d
  for ctl in /sys/fs/cgroup/*/ /sys/fs/cgroup/unified/; do
    d=${ctl%/}$CGROUP_ROOT
    [ -d "$d" ] || continue
    find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    [ -d "$d" ] && log "cgroup $d is not empty; left in place"
  done
  return 0
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0   # sourced (for debugging): functions only

# One up or down at a time (two test runs, or a user and a test run, may call it together).
# The lock is the cluster's, not the cache's: it stays put when BOXBENCH_CACHE moves the cache.
UPDOWN_LOCK=/var/cache/boxbench/kube/kube-local.lock
serialize() {
  mkdir -p "$(dirname "$UPDOWN_LOCK")"
  exec 8>"$UPDOWN_LOCK"
  flock -w 900 8 || die "another kube-local.sh up/down has held $UPDOWN_LOCK for 15 min"
}

case ${1:-} in
  build) cmd_build ;;
  up) serialize; cmd_up ;;
  down) serialize; cmd_down ;;
  status) cmd_status ;;
  *) echo "usage: $0 build|up|down|status" >&2; exit 2 ;;
esac
