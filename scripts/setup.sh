#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for boxbench: packages, a running dockerd, Go modules, and
# what boxbench builds itself (runsc, FerretDB, Cassandra's jars). Idempotent; run as root.
# Each phase is timed into the run's timing log (scripts/timing.sh), which `make test` prints.
set -euo pipefail
cd "$(dirname "$0")/.."
given=${BOXBENCH_TIMING_LOG:-}
source scripts/timing.sh
[ -n "$given" ] || timing_new "make setup"   # .ci/run began the log itself
phase_begin setup/total

PKGS=(docker.io runc postgresql-15 postgresql-client-15 mariadb-server mariadb-client
      redis-server redis-tools etcd-server etcd-client debootstrap sysbench fio stress-ng sysstat
      xfsprogs e2fsprogs util-linux mount iproute2 chromium crun lxc
      qemu-system-x86 qemu-utils  # qemu: the vm and vm-docker platforms and the cgroup v2 test bed
      containerd containernetworking-plugins conntrack gcc libc6-dev openssl curl  # scripts/kube-local.sh
      busybox-static  # scripts/kube-multi-check.sh's test image
      openjdk-17-jre-headless openjdk-17-jdk-headless maven)  # dbms: cassandra (scripts/cassandra.sh)

# What needs only Go (gVisor's runsc and FerretDB built from the module proxy; boxbench's own
# modules and those of the local cluster's Kubernetes build fetched) runs in the background
# while apt downloads and installs, and is waited for below. Each is cached by version; a cached
# one costs nothing.
jobs_dir=$(mktemp -d /tmp/boxbench-setup.XXXXXX)
declare -A pid_of=()
# bg NAME CMD...: CMD as the timed phase setup/NAME, in a session of its own, so that a failed
# setup ends a whole build by its group's id.
bg() {
  local name=$1
  shift
  setsid scripts/timed.sh "setup/$name" "$@" >"$jobs_dir/$name.out" 2>"$jobs_dir/$name.err" &
  pid_of[$name]=$!
}
cleanup() {
  local rc=$? p
  for p in "${pid_of[@]}"; do kill -- -"$p" 2>/dev/null || true; done
  rm -rf "$jobs_dir"
  phase_end_all "$rc"
}
trap cleanup EXIT
# finish NAME: wait for a background job; on failure show its output and stop.
finish() {
  if ! wait "${pid_of[$1]}"; then
    echo "setup: $1 failed:" >&2
    tail -30 "$jobs_dir/$1.err" >&2
    exit 1
  fi
  unset "pid_of[$1]"
  [ ! -s "$jobs_dir/$1.err" ] || tail -1 "$jobs_dir/$1.err"
}
bg runsc bash scripts/runsc.sh
bg ferretdb bash scripts/ferretdb.sh
bg go-mod-download go mod download
# The local cluster's components build from source in `make test` (scripts/kube-local.sh); their
# modules are fetched now, while apt works: the build then only compiles.
bg kube-modules bash -c 'cd scripts/kube-local && go mod download'

phase_begin setup/apt
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  # A third-party source that cannot be reached must not stop Debian's own from updating.
  apt-get update -q || echo "setup: apt-get update reported errors; continuing with what it fetched"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  # Images install boxbench's packages at the host's versions from the same sources; a package
  # the host has at a version the sources no longer offer (a machine image older than the
  # mirror) could not be matched, so it is brought to the sources' version (the lists are
  # fresh here: apt-get update just ran).
  stale=()
  for p in "${PKGS[@]}"; do
    v=$(dpkg-query -W -f '${Version}' "$p" 2>/dev/null) || continue
    apt-cache madison "$p" | awk -F'|' '{gsub(/ /, "", $2); print $2}' | grep -qxF -- "$v" || stale+=("$p")
  done
  if [ ${#stale[@]} -gt 0 ]; then
    echo "setup: upgrading to the sources' versions (the installed ones are no longer offered): ${stale[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends --no-remove --only-upgrade "${stale[@]}"
  fi
fi
phase_end setup/apt

# Cassandra (dbms: cassandra): not in Debian; its jars are resolved from Maven Central with
# Debian's Maven (pinned, checksummed) and boxbench's launcher compiled with Debian's JDK, so it
# starts once apt is done, in the background while the rest is set up (scripts/cassandra.sh).
bg cassandra bash scripts/cassandra.sh

# Debian's packages try to start their services; boxbench runs its own servers, so the
# packaged ones (if anything started them) are not needed. Nothing here stops them: we only
# end processes we started.

# gVisor: Debian's runsc (2022) cannot start a sandbox on this kernel, so a pinned recent one is
# built from the Go module proxy and cached by version (scripts/runsc.sh; docs/runtimes.md).
finish runsc
RUNSC_DIR=$(tail -1 "$jobs_dir/runsc.out")

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
phase_begin setup/docker
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
phase_end setup/docker

# FerretDB (dbms: ferretdb): not in Debian; built from the Go module proxy at a pinned version
# (scripts/ferretdb.sh; docs/databases.md).
finish go-mod-download
finish kube-modules
finish ferretdb
finish cassandra
phase_end setup/total
echo "setup: done (phases timed in $BOXBENCH_TIMING_LOG)"
