#!/usr/bin/env bash
# The whole suite (make test): images, the Redis guest images and the local Kubernetes cluster
# first, then every package with BOXBENCH_CI=1 (a "host lacks X" skip is a failure).
#
# The Kubernetes components build from source on first use (about 10 CPU-minutes, cached by
# version under /var/cache/boxbench/kube): the build runs in the background while the images
# are built, whose debootstrap and guest boots wait on the network and the disk as much as on
# the CPU. The cluster is taken down afterwards unless it was already up.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/bin/boxbench
log=$(mktemp /tmp/boxbench-kube-build.XXXXXX.log)
# In a session of its own, so that an interrupted suite ends the whole build (go and its
# compilers), by the group's id, which is the build's pid.
setsid bash scripts/kube-local.sh build >"$log" 2>&1 &
build_pid=$!
trap 'kill -- -"$build_pid" 2>/dev/null || true' EXIT

"$bin" images build
"$bin" images build --vm --dbms redis

if ! wait "$build_pid"; then
  echo "test: building the Kubernetes components failed:" >&2
  tail -40 "$log" >&2
  exit 1
fi
trap - EXIT
rm -f "$log"

kube_was_up=
if bash scripts/kube-local.sh status >/dev/null 2>&1; then
  kube_was_up=1
else
  bash scripts/kube-local.sh up
fi
rc=0
BOXBENCH_CI=1 BOXBENCH_BIN=$bin go test -count=1 -timeout 55m ./... || rc=$?
[ -n "$kube_was_up" ] || bash scripts/kube-local.sh down || rc=1
exit "$rc"
