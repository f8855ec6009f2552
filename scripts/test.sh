#!/usr/bin/env bash
# The whole suite (make test): the images, the Redis guest images and the clusters' builds
# (Kubernetes; CoreDNS and flannel at the lowest priority, waited for after the tests) first, at
# once, then the local cluster, then every package with
# BOXBENCH_CI=1 (a "host lacks X" skip is a failure). Ends by printing where the time went
# (scripts/timing.sh's log, every package's and every slow test's wall time), on failure too.
#
# What runs at once: the clusters' builds are CPU-bound (about 20 CPU-minutes cold, cached by
# version under /var/cache/boxbench; `.ci/run` starts them before `make setup`, scripts/builds.sh,
# and here they only wait for its build locks); the images wait on the mirror and the disk (one
# Debian base, then each database's packages, several at a time); the guest images start from
# Redis's tree as soon as it exists. Each is cached: warm, all cost seconds. The cluster is
# taken down afterwards unless it was already up.
#
# The packages' tests: most of their time is waiting (QEMU guests under TCG, JVMs, pods), so
# TEST_P packages run at once (go test -p; default 2, go's own default on 2 cpus: the cold run of
# 2026-11-27 at 4 lost a Cassandra start in platform/native and a PostgreSQL cluster's data load
# in e2e to the contention, each past its time limit; raise it on a host with more cpus). go test starts the packages in the
# order given: the slowest first (SLOW, from the timing report), so that the longest (e2e, its
# tests 4 at a time) is the critical path from the start and the others fill the other slot;
# platform/vm, whose guests compute under TCG while they boot, comes after platform/docker: away
# from e2e's own VM test, which e2e starts first (its guest agent timed out beside platform/vm
# in the cold run of 2026-11-27), and not tenth, where by the package times at -p 2 it would
# start about when e2e ends and its 7-10 minutes would be the suite's tail (issue 28);
# internal/cgroup/v2test, two short TCG boots, after the other slow ones.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/bin/boxbench
given=${BOXBENCH_TIMING_LOG:-}
source scripts/timing.sh
# A log that already holds a test run's phases is an earlier run's: begin a new one.
if [ -z "$given" ] && { [ ! -f "$BOXBENCH_TIMING_LOG" ] || grep -q $'\ttest/' "$BOXBENCH_TIMING_LOG"; }; then
  timing_new "make test"
fi
logs=$PWD/out/test-logs
mkdir -p "$logs"
rm -f out/test.json
go build -o bin/timing ./scripts/timing

pids=()
report() {
  local rc=$?
  if [ ${#pids[@]} -gt 0 ]; then
    kill -- "${pids[@]/#/-}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true   # each records its phase as interrupted
  fi
  phase_end_all "$rc"
  echo
  bin/timing report -log "$BOXBENCH_TIMING_LOG" -json out/test.json || cat "$BOXBENCH_TIMING_LOG"
  exit "$rc"
}
trap report EXIT

# start NAME CMD...: CMD as the timed phase NAME in a session of its own (an interrupted suite
# ends the whole build, go and its compilers, by the group's id, which is its pid), its output
# in out/test-logs/NAME.log.
declare -A pid_of=()
start() {
  local name=$1
  shift
  setsid scripts/timed.sh "test/$name" "$@" >"$logs/$name.log" 2>&1 &
  pid_of[$name]=$!
  pids+=("$!")
}
# finish NAME: wait for it; show its output (all of it for the images, the tail on failure).
finish() {
  if ! wait "${pid_of[$1]}"; then
    echo "test: $1 failed:" >&2
    tail -40 "$logs/$1.log" >&2
    exit 1
  fi
  case $1 in images | guest-images) cat "$logs/$1.log" ;; *) tail -1 "$logs/$1.log" ;; esac
}

start kube-build bash scripts/kube-local.sh build
# The multi-node cluster's (scripts/kube-multi.sh sourced gives its functions only), at the
# lowest priority: only e2e's TestKubernetesMultiNode needs them, and its `kube-multi.sh up`
# waits on their build locks. So the suite starts when the images, the guest images and the
# Kubernetes build are done, and these two take the cpu the tests leave (most of the tests'
# time is waiting); they are waited for after the tests.
start coredns nice -n 19 bash -c 'source scripts/kube-multi.sh && build_coredns'
start flannel nice -n 19 bash -c 'source scripts/kube-multi.sh && build_flannel'
start images "$bin" images build
# Only the guest images the tests boot (platform/vm, internal/cgroup/v2test and e2e boot Redis's);
# `make vm-images` builds the others.
start guest-images "$bin" images build --vm --dbms redis
finish images
finish guest-images
finish kube-build
pids=("${pid_of[coredns]}" "${pid_of[flannel]}")

kube_was_up=
if bash scripts/kube-local.sh status >/dev/null 2>&1; then
  kube_was_up=1
else
  phase_begin test/cluster-up
  bash scripts/kube-local.sh up
  phase_end test/cluster-up
fi
rc=0
phase_begin test/go-test
# -json for the report; scripts/timing prints what plain `go test ./...` would and keeps the
# stream in out/test.json.
set +e
SLOW=(./e2e ./platform/docker ./platform/vm ./platform/native ./cluster ./runner
      ./platform/kubernetes ./platform/swarm ./images/rootfs ./workload/ycsb ./internal/cgroup/v2test)
BOXBENCH_CI=1 BOXBENCH_BIN=$bin go test -json -count=1 -timeout 55m -p "${TEST_P:-2}" \
  "${SLOW[@]}" ./... 2>&1 | bin/timing stream -raw out/test.json
rc=${PIPESTATUS[0]}
set -e
phase_end test/go-test "$rc"
if [ -z "$kube_was_up" ]; then
  phase_begin test/cluster-down
  bash scripts/kube-local.sh down || rc=1
  phase_end test/cluster-down
fi
finish coredns
finish flannel
pids=()
exit "$rc"
