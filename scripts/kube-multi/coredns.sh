# shellcheck shell=bash
# Cluster DNS for scripts/kube-multi.sh (sourced): CoreDNS built from source through the Go
# module proxy, cached by version, in a one-layer image loaded into every node's containerd, run
# as a Deployment behind the kube-dns Service at $DNS_IP (the kubelets' clusterDNS).

COREDNS_VERSION=v1.15.0        # pinned in coredns/go.mod (the wrapper module) too
COREDNS_CACHE=${BOXBENCH_CACHE:-/var/cache/boxbench}/coredns   # BOXBENCH_CACHE moves every build cache (docs/ci.md)
COREDNS_IMAGE=boxbench.local/coredns:$COREDNS_VERSION
# The wrapper main module: upstream's server with only the Corefile's plugins (its main.go says
# why); a plugin added to the Corefile below must be added there too.
COREDNS_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/coredns

# The cache key: the version and the hash of everything that decides the binary.
coredns_key() {
  (cd "$COREDNS_SRC" && cat go.mod go.sum main.go && go env GOVERSION) | sha256sum | cut -c1-16
}
coredns_dir() { echo "$COREDNS_CACHE/$COREDNS_VERSION/$(coredns_key)"; }
coredns_tar() { echo "$(coredns_dir)/coredns-image.tar"; }

# A static binary (CGO off, like upstream's release) needs no base system, so its image is the
# binary alone, as upstream's own image is (distroless static): nothing to debootstrap or cache.
build_coredns() {
  command -v go >/dev/null || die "go is not installed (CoreDNS is built from source)"
  local dir tmp start
  dir=$(coredns_dir)
  mkdir -p "$dir"
  exec 7>"$COREDNS_CACHE/$COREDNS_VERSION.lock"
  flock 7
  if [ ! -x "$dir/coredns" ]; then
    log "building CoreDNS $COREDNS_VERSION from source (cold: minutes on 2 cores)"
    start=$(date +%s)
    tmp=$(mktemp -d "$dir/tmp.XXXXXX")
    # The wrapper module, its go.sum pinning every module; its own build cache, kept for rebuilds.
    (cd "$COREDNS_SRC" && GOCACHE=$COREDNS_CACHE/go-build GOFLAGS=-mod=readonly CGO_ENABLED=0 \
      go build -trimpath -ldflags "-s -w" -o "$tmp/coredns" .) ||
      { rm -rf "$tmp"; die "CoreDNS build failed"; }
    mv "$tmp/coredns" "$dir/coredns"
    rm -rf "$tmp"
    log "CoreDNS built in $(( $(date +%s) - start )) s: $dir/coredns"
  fi
  if [ ! -s "$(coredns_tar)" ]; then
    local root
    root=$(mktemp -d)
    cp "$dir/coredns" "$root/coredns"
    one_layer_image "$(coredns_tar)" "$COREDNS_IMAGE" '["/coredns"]' "$root"
    rm -rf "$root"
  fi
  flock -u 7
  exec 7>&-
}

# one_layer_image TAR TAG ENTRYPOINT_JSON DIR: an image archive (the `docker save` layout that
# `ctr images import` reads) of DIR's files in one layer, reproducible (sorted, mtime 0, root).
one_layer_image() {
  local tar=$1 tag=$2 entry=$3 root=$4 work lsha csha
  work=$(mktemp -d)
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$work/layer.tar" .
  lsha=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
  cat >"$work/config.json" <<JSON
{"architecture":"amd64","os":"linux","config":{"Entrypoint":$entry},"rootfs":{"type":"layers","diff_ids":["sha256:$lsha"]},"history":[{"created_by":"boxbench scripts/kube-multi"}]}
JSON
  csha=$(sha256sum "$work/config.json" | cut -d' ' -f1)
  mkdir -p "$work/img/$lsha"
  mv "$work/layer.tar" "$work/img/$lsha/layer.tar"
  mv "$work/config.json" "$work/img/$csha.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]\n' "$csha" "$tag" "$lsha" >"$work/img/manifest.json"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/img" -cf "$tar.tmp" .
  mv "$tar.tmp" "$tar"
  rm -rf "$work"
  log "image $tag: $tar"
}

# import_image I TAR REF: load an image archive into node I's containerd unless REF is there.
import_image() {
  local i=$1 tar=$2 ref=$3
  ctr --address "$(node_sock "$i")" -n k8s.io images ls -q | grep -xF "$ref" >/dev/null && return 0
  ctr --address "$(node_sock "$i")" -n k8s.io images import "$tar" >/dev/null
}

deploy_coredns() {
  local deadline=$1
  kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            pods insecure
            fallthrough in-addr.arpa ip6.arpa
            ttl 30
        }
        forward . /etc/resolv.conf
        cache 30
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      priorityClassName: system-cluster-critical
      dnsPolicy: Default
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        imagePullPolicy: Never
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
        livenessProbe: {httpGet: {path: /health, port: 8080}, initialDelaySeconds: 30}
        resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 170Mi}}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
  log "waiting for CoreDNS"
  until [ "$(kubectl -n kube-system get deploy coredns -o 'jsonpath={.status.readyReplicas}' 2>/dev/null)" = 1 ]; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      kubectl -n kube-system get pods -o wide >&2 || true
      kubectl -n kube-system get events --field-selector type=Warning \
        -o 'jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}' 2>/dev/null | tail -n 5 >&2 || true
      die "CoreDNS is not Ready"
    fi
    sleep 1
  done
}
