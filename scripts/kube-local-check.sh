#!/usr/bin/env bash
# An end-to-end check of scripts/kube-local.sh: up from nothing, a Service reached from the host
# (pod IP, ClusterIP, NodePort, hostPort), an idempotent second up, down, and then the host
# exactly as before (iptables chains, links, mounts, cgroups, kernel tunables, directories,
# listening ports). Needs a Docker image with redis-server (IMAGE=..., default: the newest
# boxbench/redis built by `make images`) and redis-cli on the host.
#
# It refuses to run while the local cluster is up: `down` would end someone else's pods.
set -euo pipefail
cd "$(dirname "$0")/.."
KL=scripts/kube-local.sh
SOCK=/run/boxbench/kube/containerd/containerd.sock
K="/run/boxbench/kube/bin/kubectl --kubeconfig /var/lib/boxbench/kube/admin.kubeconfig"
passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

if [ -e /var/lib/boxbench/kube ] || [ -e /run/boxbench/kube/pids ]; then
  echo "kube-local-check: the local cluster exists; run 'scripts/kube-local.sh down' first (it ends every pod)" >&2
  exit 1
fi
IMAGE=${IMAGE:-$(docker images --format '{{.Repository}}:{{.Tag}}' boxbench/redis | head -n 1)}
[ -n "$IMAGE" ] || { echo "kube-local-check: no boxbench/redis image; run 'make images' or set IMAGE" >&2; exit 1; }
command -v redis-cli >/dev/null || { echo "kube-local-check: redis-cli is not installed" >&2; exit 1; }

# What the cluster could leave behind. Scoped to its own names, addresses and ports, because
# other programs on a shared host change iptables, links and mounts at the same time.
snapshot() {
  local ipt t
  for ipt in iptables ip6tables; do
    for t in filter nat mangle raw; do
      "$ipt" -t "$t" -S 2>/dev/null | grep -E 'KUBE-|CNI-|10\.244\.|10\.96\.|bbkube0' | sed "s/^/$ipt $t /" || true
    done
  done
  ip -o link | awk -F': ' '{print "link", $2}' | sed 's/@.*//' | grep -E 'bbkube0|cni' || true
  ip -4 route | grep -E '10\.244\.|10\.96\.' | sed 's/^/route /' || true
  findmnt -rn -o TARGET | grep -E 'boxbench/kube|boxbench-kube|kubelet|netns|/var/lib/cni' | grep -v '^/run/docker/' | sed 's/^/mount /' || true
  find /sys/fs/cgroup -maxdepth 2 -name 'boxbench-kube*' | sed 's/^/cgroup /'
  for t in vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops \
           kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.bridge.bridge-nf-call-iptables \
           net.bridge.bridge-nf-call-ip6tables net.ipv4.ip_forward net.ipv4.conf.all.route_localnet; do
    echo "sysctl $t=$(sysctl -n "$t" 2>/dev/null)"
  done
  for t in /var/lib/boxbench/kube /run/boxbench/kube /var/log/boxbench-kube /var/lib/cni \
           /var/log/containers /var/log/pods /var/run/netns /run/kubernetes /var/lib/kubelet \
           /etc/cni /opt/cni /etc/kubernetes; do
    [ -e "$t" ] && echo "path $t"
  done
  # The components' ports: apiserver, etcd, kubelet, kube-proxy, controller-manager, scheduler.
  ss -Hltn | awk '{print "listen", $4}' | grep -E ':(6443|12379|12380|10250|10248|10249|10256|10257|10259)$' || true
}
before=$(mktemp) after=$(mktemp)
trap 'rm -f "$before" "$after"' EXIT
snapshot | sort >"$before"

start=$(date +%s)
if bash "$KL" up; then ok "up ($(($(date +%s) - start)) s)"; else bad up; bash "$KL" down || true; echo "$passed passed, $failed failed"; exit 1; fi
bash "$KL" status >/dev/null && ok "status exits 0 while up" || bad "status exits 0 while up"

start=$(date +%s)
docker save "$IMAGE" | ctr --address "$SOCK" -n k8s.io images import - >/dev/null && ok "image imported ($(($(date +%s) - start)) s)" || bad "image import"
$K apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: kube-local-check}
---
apiVersion: v1
kind: Pod
metadata: {name: redis, namespace: kube-local-check, labels: {app: kube-local-check}}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: redis
    image: $IMAGE
    imagePullPolicy: Never
    command: [redis-server, --bind, 0.0.0.0, --port, "6379", --protected-mode, "no", --save, ""]
    ports: [{containerPort: 6379, hostPort: 16379}]
---
apiVersion: v1
kind: Service
metadata: {name: redis, namespace: kube-local-check}
spec:
  type: NodePort
  selector: {app: kube-local-check}
  ports: [{port: 6379, targetPort: 6379}]
EOF
if $K -n kube-local-check wait --for=condition=Ready pod/redis --timeout=120s >/dev/null; then
  ok "redis pod Ready"
  pod=$($K -n kube-local-check get pod redis -o 'jsonpath={.status.podIP}')
  cip=$($K -n kube-local-check get svc redis -o 'jsonpath={.spec.clusterIP}')
  np=$($K -n kube-local-check get svc redis -o 'jsonpath={.spec.ports[0].nodePort}')
  node=$($K get node boxbench-node -o 'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}')
  for target in "pod-ip $pod 6379" "cluster-ip $cip 6379" "node-port $node $np" "host-port $node 16379"; do
    set -- $target
    # kube-proxy and portmap program their rules a moment after the pod is Ready: up to 30 s.
    answered=
    for _ in $(seq 1 30); do
      [ "$(timeout 5 redis-cli -h "$2" -p "$3" ping 2>/dev/null)" = PONG ] && { answered=1; break; }
      sleep 1
    done
    if [ -n "$answered" ]; then ok "$1 $2:$3 answers from the host"; else bad "$1 $2:$3 answers from the host"; fi
  done
else
  bad "redis pod Ready"
fi

start=$(date +%s)
bash "$KL" up >/dev/null 2>&1 && ok "second up is idempotent ($(($(date +%s) - start)) s)" || bad "second up"
[ "$(timeout 10 redis-cli -h "${pod:-0}" -p 6379 ping 2>/dev/null)" = PONG ] && ok "the pod survived the second up" || bad "the pod survived the second up"

start=$(date +%s)
bash "$KL" down && ok "down ($(($(date +%s) - start)) s)" || bad down
bash "$KL" status >/dev/null 2>&1 && bad "status exits non-zero when down" || ok "status exits non-zero when down"
snapshot | sort >"$after"
if diff -u "$before" "$after" >/dev/null; then
  ok "the host is as before (iptables, links, mounts, cgroups, sysctls, directories, ports)"
else
  bad "the host is not as before:"
  diff "$before" "$after" | grep '^[<>]' | sed 's/^/     /'
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
