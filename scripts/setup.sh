#!/usr/bin/env bash
# Sets up a Debian 12 machine for boxbench, step by step: `bash scripts/setup.sh [STEP...]`
# installs what the named steps need — their Debian packages, a running dockerd, what boxbench
# builds itself — and nothing else. Idempotent; run as root.
#
#   (none)      the quickstart's: quickstart (`make setup`)
#   quickstart  base, docker, images, redis: Redis natively and in Docker (examples/quickstart.yaml)
#   all         every step (`make test`, CI)
#   base        boxbench's own Go modules and the host tools every run uses (setpriv, mount, ip, mkfs.ext4)
#   docker      Docker's engine and runc, dockerd started when it is not running
#   images      debootstrap: root filesystems and images built offline (`boxbench images build`)
#   tools       sysbench, fio, stress-ng, sysstat, xfsprogs: workloads, neighbours, blockdev xfs
#   runtimes    crun and gVisor's runsc (built from the module proxy), registered with dockerd
#   lxc         LXC
#   vm          QEMU (the vm and vm-docker platforms, the cgroup v2 test bed)
#   kubernetes  what the local cluster builds and runs with (scripts/kube-local.sh), its modules fetched
#   browser     Chromium (the HTML report's rendering test)
#   redis postgresql mariadb etcd ferretdb cassandra
#               a database natively (its Debian packages; FerretDB built from the module proxy,
#               Cassandra's jars from Maven Central with Debian's JDK)
#
# `boxbench setup SPEC` says which steps (and which images) one spec needs; `make setup SPEC=FILE`
# installs them. Each step's work is timed into the run's timing log (scripts/timing.sh), which
# `make test` prints.
set -euo pipefail
cd "$(dirname "$0")/.."
given=${BOXBENCH_TIMING_LOG:-}
source scripts/timing.sh
[ -n "$given" ] || timing_new "make setup"   # .ci/run began the log itself
phase_begin setup/total

# Each step's Debian packages.
declare -A PKGS=(
  [base]="util-linux mount iproute2 e2fsprogs"
  [docker]="docker.io runc"
  [images]="debootstrap"
  [tools]="sysbench fio stress-ng sysstat xfsprogs"
  [runtimes]="crun"
  [lxc]="lxc"
  [vm]="qemu-system-x86 qemu-utils"
  [kubernetes]="containerd containernetworking-plugins conntrack gcc libc6-dev openssl curl busybox-static"
  [browser]="chromium"
  [redis]="redis-server redis-tools"
  [postgresql]="postgresql-15 postgresql-client-15"
  [mariadb]="mariadb-server mariadb-client"
  [etcd]="etcd-server etcd-client"
  [ferretdb]=""
  [cassandra]="openjdk-17-jre-headless openjdk-17-jdk-headless maven"
)
# Steps that another needs: FerretDB serves from PostgreSQL; the runtimes and the local cluster
# are the engine's; the vm images and a cluster's are made from root filesystems.
declare -A NEEDS=([quickstart]="base docker images redis" [ferretdb]="postgresql" [runtimes]="docker"
  [kubernetes]="docker images" [vm]="images")
ALL="base docker images tools runtimes lxc vm kubernetes browser redis postgresql mariadb etcd ferretdb cassandra"

declare -A want=()
add() {
  local s=$1 n
  [ -z "${want[$s]:-}" ] || return 0
  if [ "$s" != quickstart ] && [ -z "${PKGS[$s]+x}" ]; then
    echo "setup: no step $s (steps: quickstart all $ALL)" >&2
    exit 2
  fi
  want[$s]=1
  for n in ${NEEDS[$s]:-}; do add "$n"; done
}
[ $# -gt 0 ] || set -- quickstart
for s in "$@"; do
  if [ "$s" = all ]; then
    for a in $ALL; do add "$a"; done
  else
    add "$s"
  fi
done
add base
wants() { [ -n "${want[$1]:-}" ]; }
steps=()
for s in $ALL; do wants "$s" && steps+=("$s"); done
echo "setup: steps ${steps[*]}"
pkgs=()
for s in "${steps[@]}"; do
  # shellcheck disable=SC2206 # a step's packages are words
  pkgs+=(${PKGS[$s]})
done

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
! wants runtimes || bg runsc bash scripts/runsc.sh
! wants ferretdb || bg ferretdb bash scripts/ferretdb.sh
bg go-mod-download go mod download
# The local cluster's components build from source in `make test` (scripts/kube-local.sh); their
# modules are fetched now, while apt works: the build then only compiles.
! wants kubernetes || bg kube-modules bash -c 'cd scripts/kube-local && go mod download'

phase_begin setup/apt
missing=()
for p in "${pkgs[@]}"; do
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
  for p in "${pkgs[@]}"; do
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
! wants cassandra || bg cassandra bash scripts/cassandra.sh

# Debian's packages try to start their services; boxbench runs its own servers, so the
# packaged ones (if anything started them) are not needed. Nothing here stops them: we only
# end processes we started.

# gVisor: Debian's runsc (2022) cannot start a sandbox on this kernel, so a pinned recent one is
# built from the Go module proxy and cached by version (scripts/runsc.sh; docs/runtimes.md).
if wants runtimes; then
  finish runsc
  RUNSC_DIR=$(tail -1 "$jobs_dir/runsc.out")
fi

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
if wants docker; then
  phase_begin setup/docker
  if wants runtimes; then
    state=$(register_runtimes)
    if [ "$state" = unchanged ] && ! registered; then
      state=$(register_runtimes -force-reload)
    fi
    echo "setup: runtimes runsc, runsc-host -> $RUNSC_DIR/runsc (dockerd: $state)"
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

  if wants runtimes; then
    for _ in $(seq 1 30); do registered && break; sleep 1; done
    registered || { echo "setup: dockerd did not load the runtimes runsc and runsc-host from /etc/docker/daemon.json (a dockerd not named in /var/run/docker.pid must be sent SIGHUP by hand)"; exit 1; }
  fi
  phase_end setup/docker
fi

# FerretDB (dbms: ferretdb): not in Debian; built from the Go module proxy at a pinned version
# (scripts/ferretdb.sh; docs/databases.md).
finish go-mod-download
! wants kubernetes || finish kube-modules
! wants ferretdb || finish ferretdb
! wants cassandra || finish cassandra
phase_end setup/total
echo "setup: done (phases timed in $BOXBENCH_TIMING_LOG)"
