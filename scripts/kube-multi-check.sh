#!/usr/bin/env bash
# An end-to-end check of scripts/kube-multi.sh, under each CNI in turn (default: routes vxlan):
# up from nothing with NODES nodes (default 3), every node Ready, a pod on each node reaching
# every other by pod IP, cluster DNS resolving a headless Service's pod names and a ClusterIP
# Service (reached through kube-proxy), the host reaching pods, a second up that changes
# nothing, down, and then the host as before (iptables, links, routes, mounts, cgroups, kernel
# tunables, directories, processes, the nodes' namespaces).
#
#   scripts/kube-multi-check.sh [--name NAME] [routes] [vxlan] [cilium]
#
# --name NAME checks instance NAME (scripts/kube-multi.sh --name) instead of the default one, so it
# can run beside a cluster someone else uses.
# The test image is Debian's busybox-static in a one-layer image. It refuses to run while the
# multi-node cluster is up (down would end someone else's pods).
set -euo pipefail
cd "$(dirname "$0")/.."
KM=scripts/kube-multi.sh
NODES=${NODES:-3}
INST=
if [ "${1:-}" = --name ]; then
  [[ ${2:-} =~ ^[a-z][a-z0-9]{0,5}$ ]] || { echo "kube-multi-check: --name: '${2:-}' is not an instance name" >&2; exit 2; }
  INST=$2
  shift 2
fi
SFX=${INST:+-$INST}
KMA=(${INST:+--name "$INST"})   # after the command: kube-multi.sh's instance
K="/run/boxbench/multi$SFX/bin/kubectl --kubeconfig /var/lib/boxbench/multi$SFX/admin.kubeconfig"
NODE=bbmulti$SFX-
NS=kube-multi-check
IMAGE=boxbench.local/busybox:check
passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

if [ -e "/var/lib/boxbench/multi$SFX" ] || [ -e "/run/boxbench/multi$SFX" ]; then
  echo "kube-multi-check: the multi-node cluster${INST:+ '$INST'} exists; run 'scripts/kube-multi.sh down ${KMA[*]}' first (it ends every pod)" >&2
  exit 1
fi
[ -x /bin/busybox ] && file -L /bin/busybox | grep -q 'statically linked' ||
  { echo "kube-multi-check: needs Debian's busybox-static (/bin/busybox)" >&2; exit 1; }

# What the cluster could leave behind, scoped to its own names, addresses and paths (other
# programs on a shared host change iptables, links and mounts at the same time).
snapshot() {
  local ipt t
  for ipt in iptables ip6tables; do
    for t in filter nat mangle raw; do
      "$ipt" -t "$t" -S 2>/dev/null | grep -E 'bbmulti|bbm[0-9]|bbm-|boxbench-multi|10\.245\.|10\.97\.|10\.250\.' | sed "s/^/$ipt $t /" || true
    done
  done
  ip -o link | awk -F': ' '{print "link", $2}' | sed 's/@.*//' | grep -E 'bbmulti|bbm[0-9]|bbm-|cilium|lxc' || true
  # Cilium's BPF objects (names cil_*/tail_* and cilium_*), the host's devices' BPF attachments,
  # the cgroup v2 root's programs, a bpffs on the host: all must stay inside the nodes.
  if command -v bpftool >/dev/null; then
    bpftool prog show 2>/dev/null | grep -oE 'name (cil|tail)_[a-z0-9_]+' | sort | uniq -c | sed 's/^ */bpf prog /' || true
    bpftool map show 2>/dev/null | grep -oE 'name cilium_[a-z0-9_]+' | sort | uniq -c | sed 's/^ */bpf map /' || true
    # tcx links (how Cilium attaches on this kernel), which Debian 12's bpftool 7.1 shows only here.
    bpftool link show 2>/dev/null | awk '/^[0-9]+:/ {print "bpf link", $2, $3}' | sort | uniq -c || true
    bpftool net show 2>/dev/null | grep -E '^[a-z]' | grep -vE '^(xdp|tc|flow_dissector|netfilter):$' | sed 's/^/bpf net /' || true
    [ -d /sys/fs/cgroup/unified ] && bpftool cgroup tree /sys/fs/cgroup/unified 2>/dev/null | sed 1d | sed 's/^/bpf cgroup /'
  fi
  findmnt -rn -t bpf -o TARGET | sed 's/^/bpffs /' || true
  ip -4 route | grep -E '10\.245\.|10\.97\.|10\.250\.' | sed 's/^/route /' || true
  findmnt -rn -o TARGET | grep -E 'boxbench/multi|boxbench-multi|/var/lib/kubelet|/var/lib/cni|/etc/cni|/var/log/pods|/var/log/containers' | sed 's/^/mount /' || true
  find /sys/fs/cgroup -maxdepth 2 -name 'boxbench-multi*' | sed 's/^/cgroup /'
  for t in vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops \
           kernel.keys.root_maxkeys kernel.keys.root_maxbytes kernel.unprivileged_bpf_disabled kernel.timer_migration; do
    echo "sysctl $t=$(sysctl -n "$t" 2>/dev/null)"
  done
  for t in "/var/lib/boxbench/multi$SFX" "/run/boxbench/multi$SFX" "/var/log/boxbench-multi$SFX" /var/lib/kubelet \
           /var/lib/cni /etc/cni /var/log/pods /var/log/containers /run/cilium; do
    [ -e "$t" ] && echo "path $t"
  done
  ps -eo pid=,args= | grep -E 'boxbench/multi|boxbench-multi' | grep -v -E 'grep|kube-multi-check' | sed 's/^/process /' || true
}

# The inodes of the nodes' namespaces while up; after down no process and no mount may hold one.
ns_inodes() { stat -L -c '%i' "/run/boxbench/multi$SFX"/ns/* 2>/dev/null | sort -u; }
ns_held() {
  local want=$1 p
  for p in /proc/[0-9]*/ns/net /proc/[0-9]*/ns/mnt /proc/[0-9]*/ns/uts; do
    readlink "$p" 2>/dev/null
  done | sed -n 's/^[a-z]*:\[\([0-9]*\)\]$/\1/p' | sort -u | comm -12 - "$want"
  findmnt -rn -t nsfs -o SOURCE | sed -n 's/.*\[\([0-9]*\)\]$/\1/p' | sort -u | comm -12 - "$want"
}

busybox_image() {
  local root
  root=$(mktemp -d)
  mkdir -p "$root/bin" "$root/tmp"
  cp /bin/busybox "$root/bin/busybox"
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$root/bin/$a"; done
  # one_layer_image from the script itself, so the check builds images the same way.
  (source scripts/kube-multi.sh && one_layer_image "$1" "$IMAGE" '["/bin/sh"]' "$root")
  rm -rf "$root"
}

pods_yaml() {
  local i
  echo "apiVersion: v1
kind: Namespace
metadata: {name: $NS}
---
apiVersion: v1
kind: Service
metadata: {name: mesh, namespace: $NS}
spec: {clusterIP: None, selector: {app: check}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: $NS}
spec: {selector: {app: check}, ports: [{port: 80}]}"
  for ((i = 1; i <= NODES; i++)); do
    echo "---
apiVersion: v1
kind: Pod
metadata: {name: p$i, namespace: $NS, labels: {app: check}}
spec:
  nodeName: $NODE$i
  hostname: p$i
  subdomain: mesh
  terminationGracePeriodSeconds: 0
  containers:
  - name: web
    image: $IMAGE
    imagePullPolicy: Never
    command: [/bin/sh, -c, 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 80 -h /www']"
  done
}

# The last line of an HTTP answer (the pod's hostname): busybox's nc, not its wget, which
# segfaults in an image without the C library's NSS files.
GET='printf "GET / HTTP/1.0\r\n\r\n" | nc -w 5 "$0" 80 | tail -n 1'
pod_get() { $K -n $NS exec "$1" -- sh -c "$GET" "$2" 2>&1 || true; }

# check_cni CNI: one whole up … down cycle.
check_cni() {
  local cni=$1 start before after inodes i j ip got tar
  local -A pip=()
  before=$(mktemp) after=$(mktemp) inodes=$(mktemp) tar=$(mktemp)
  snapshot | sort >"$before"
  echo "== CNI $cni, $NODES nodes"
  start=$(date +%s)
  if bash "$KM" up "${KMA[@]}" --nodes "$NODES" --cni "$cni"; then ok "$cni: up ($(($(date +%s) - start)) s)"; else bad "$cni: up"; bash "$KM" down "${KMA[@]}" || true; rm -f "$before" "$after" "$inodes" "$tar"; return; fi
  ns_inodes >"$inodes"
  bash "$KM" status "${KMA[@]}" >/dev/null && ok "$cni: status exits 0 while up" || bad "$cni: status exits 0 while up"
  [ "$($K get nodes --no-headers | awk '$2 == "Ready"' | wc -l)" -ge 3 ] && ok "$cni: ≥ 3 nodes Ready" || bad "$cni: ≥ 3 nodes Ready"

  busybox_image "$tar"
  bash "$KM" load "${KMA[@]}" "$tar" && ok "$cni: test image loaded into every node" || bad "$cni: test image loaded"
  pods_yaml | $K apply -f - >/dev/null
  if $K -n $NS wait --for=condition=Ready pod --all --timeout=120s >/dev/null; then
    ok "$cni: a pod Ready on each node"
    for ((i = 1; i <= NODES; i++)); do pip[$i]=$($K -n $NS get pod "p$i" -o 'jsonpath={.status.podIP}'); done
    for ((i = 1; i <= NODES; i++)); do
      for ((j = 1; j <= NODES; j++)); do
        [ "$i" = "$j" ] && continue
        got=$(pod_get "p$i" "${pip[$j]}")
        [ "$got" = "p$j" ] && ok "$cni: p$i ($NODE$i) reaches p$j ($NODE$j) at ${pip[$j]}" || bad "$cni: p$i reaches p$j at ${pip[$j]}: $got"
        got=$($K -n $NS exec "p$i" -- nslookup "p$j.mesh.$NS.svc.cluster.local" 2>&1 || true)
        echo "$got" | grep -qE "^Address: ${pip[$j]}\$" && ok "$cni: p$i resolves p$j.mesh.$NS.svc.cluster.local (headless)" ||
          bad "$cni: p$i resolves p$j.mesh (headless): $(echo "$got" | tr '\n' ' ')"
      done
      ip=$($K -n $NS get svc web -o 'jsonpath={.spec.clusterIP}')
      got=$($K -n $NS exec "p$i" -- nslookup "web.$NS.svc.cluster.local" 2>&1 || true)
      echo "$got" | grep -qE "^Address: $ip\$" && ok "$cni: p$i resolves web.$NS.svc.cluster.local to its ClusterIP $ip" ||
        bad "$cni: p$i resolves web (ClusterIP $ip): $(echo "$got" | tr '\n' ' ')"
      got=$(pod_get "p$i" "web.$NS.svc.cluster.local")
      [[ $got =~ ^p[0-9]+$ ]] && ok "$cni: p$i reaches the ClusterIP Service by name (answered by $got)" || bad "$cni: p$i reaches web by name: $got"
      got=$(timeout 10 busybox sh -c "$GET" "${pip[$i]}" 2>&1 || true)
      [ "$got" = "p$i" ] && ok "$cni: the host reaches p$i at ${pip[$i]}" || bad "$cni: the host reaches p$i: $got"
    done
  else
    bad "$cni: a pod Ready on each node"
    $K -n $NS get pods -o wide || true
  fi
  # How node 1 routes to node 2's pods: via node 2's address (routes) or the VXLAN device.
  echo "     node 1's route to node 2's pods: $(nsenter --net="/run/boxbench/multi$SFX/ns/n1.net" ip route get "${pip[2]:-10.245.1.1}" | head -n 1)"

  start=$(date +%s)
  bash "$KM" up "${KMA[@]}" --nodes "$NODES" --cni "$cni" >/dev/null 2>&1 && ok "$cni: second up is idempotent ($(($(date +%s) - start)) s)" || bad "$cni: second up"
  got=$(pod_get p1 "${pip[2]:-0}")
  [ "$got" = p2 ] && ok "$cni: the pods survived the second up" || bad "$cni: the pods survived the second up: $got"

  start=$(date +%s)
  bash "$KM" down "${KMA[@]}" && ok "$cni: down ($(($(date +%s) - start)) s)" || bad "$cni: down"
  bash "$KM" status "${KMA[@]}" >/dev/null 2>&1 && bad "$cni: status exits non-zero when down" || ok "$cni: status exits non-zero when down"
  snapshot | sort >"$after"
  if diff -u "$before" "$after" >/dev/null; then
    ok "$cni: the host is as before (iptables, links, routes, mounts, cgroups, sysctls, directories, processes)"
  else
    bad "$cni: the host is not as before:"
    diff "$before" "$after" | grep '^[<>]' | sed 's/^/     /'
  fi
  got=$(ns_held "$inodes")
  [ -z "$got" ] && [ -s "$inodes" ] && ok "$cni: none of the $(wc -l <"$inodes") node namespaces is left" || bad "$cni: node namespaces still held: $(echo $got)"
  rm -f "$before" "$after" "$inodes" "$tar"
}

cnis=("$@")
[ ${#cnis[@]} -gt 0 ] || cnis=(routes vxlan)
for cni in "${cnis[@]}"; do check_cni "$cni"; done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
