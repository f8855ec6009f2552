#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for boxbench: packages, a running dockerd, Go modules.
# Idempotent; run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(docker.io runc postgresql-15 postgresql-client-15 mariadb-server mariadb-client
      redis-server redis-tools etcd-server etcd-client debootstrap sysbench fio stress-ng sysstat xfsprogs e2fsprogs
      util-linux mount iproute2 chromium crun runsc lxc
      qemu-system-x86 qemu-utils)  # qemu: the vm and vm-docker platforms and the cgroup v2 test bed

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

# Register the other OCI runtimes with the engine, so that boxbench can probe them and report
# what they do on this kernel. An existing daemon.json is left alone.
if [ ! -e /etc/docker/daemon.json ]; then
  mkdir -p /etc/docker
  cat >/etc/docker/daemon.json <<'JSON'
{
  "runtimes": {
    "crun": {"path": "/usr/bin/crun"},
    "runsc": {"path": "/usr/bin/runsc"}
  }
}
JSON
fi

if ! timeout 10 docker info >/dev/null 2>&1; then
  echo "setup: starting dockerd"
  nohup dockerd >/var/log/boxbench-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    timeout 5 docker info >/dev/null 2>&1 && break
    sleep 1
  done
  timeout 10 docker info >/dev/null 2>&1 || { echo "setup: dockerd did not come up; see /var/log/boxbench-dockerd.log"; tail -20 /var/log/boxbench-dockerd.log; exit 1; }
fi

go mod download

# FerretDB (dbms: ferretdb): not in Debian; built from the Go module proxy at a pinned version
# and cached by version (scripts/ferretdb.sh; docs/databases.md). A cached build costs nothing.
bash scripts/ferretdb.sh >/dev/null
echo "setup: done"
