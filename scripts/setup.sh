#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for boxbench: packages, a running dockerd, Go modules.
# Idempotent; run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(docker.io runc postgresql-15 postgresql-client-15 mariadb-server mariadb-client
      redis-server redis-tools etcd-server etcd-client debootstrap sysbench fio stress-ng sysstat
      xfsprogs e2fsprogs util-linux mount iproute2 chromium crun lxc
      qemu-system-x86 qemu-utils  # qemu: the vm and vm-docker platforms and the cgroup v2 test bed
      containerd containernetworking-plugins conntrack gcc libc6-dev openssl curl)  # scripts/kube-local.sh

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  # A third-party source that cannot be reached must not stop Debian's own from updating.
  apt-get update -q || echo "setup: apt-get update reported errors; continuing with what it fetched"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian's packages try to start their services; boxbench runs its own servers, so the
# packaged ones (if anything started them) are not needed. Nothing here stops them: we only
# end processes we started.

# gVisor: Debian's runsc (2022) cannot start a sandbox on this kernel, so a pinned recent one is
# built from the Go module proxy and cached by version (scripts/runsc.sh; docs/runtimes.md).
RUNSC_DIR=$(bash scripts/runsc.sh | tail -1)

# Register boxbench's OCI runtimes with the engine (crun, runsc, runsc-host), so that boxbench
# can run and probe them. Only those entries of daemon.json are added or refreshed; anything else
# in it is kept. A running dockerd (the pid in its pidfile) reloads them on SIGHUP.
register_runtimes() {
  go run ./scripts/runtimes -runsc "$RUNSC_DIR/runsc" "$@"
}
registered() {
  local rts
  rts=$(timeout 10 docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' 2>/dev/null) || return 1
  for want in runsc runsc-host; do
    case " $rts " in *" $want "*) ;; *) return 1 ;; esac
  done
}
state=$(register_runtimes)
if [ "$state" = unchanged ] && ! registered; then
  state=$(register_runtimes -force-reload)
fi
echo "setup: runtimes runsc, runsc-host -> $RUNSC_DIR/runsc (dockerd: $state)"

if ! timeout 10 docker info >/dev/null 2>&1; then
  echo "setup: starting dockerd"
  nohup dockerd >/var/log/boxbench-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    timeout 5 docker info >/dev/null 2>&1 && break
    sleep 1
  done
  timeout 10 docker info >/dev/null 2>&1 || { echo "setup: dockerd did not come up; see /var/log/boxbench-dockerd.log"; tail -20 /var/log/boxbench-dockerd.log; exit 1; }
fi

for _ in $(seq 1 30); do registered && break; sleep 1; done
registered || { echo "setup: dockerd did not load the runtimes runsc and runsc-host from /etc/docker/daemon.json (a dockerd not named in /var/run/docker.pid must be sent SIGHUP by hand)"; exit 1; }

go mod download

# FerretDB (dbms: ferretdb): not in Debian; built from the Go module proxy at a pinned version
# and cached by version (scripts/ferretdb.sh; docs/databases.md). A cached build costs nothing.
bash scripts/ferretdb.sh >/dev/null
echo "setup: done"
