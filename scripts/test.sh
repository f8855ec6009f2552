#!/usr/bin/env bash
# The whole suite (make test): the images, the Redis guest images and the clusters' builds
# (Kubernetes, then the local cluster; CoreDNS and flannel below the tests' priority) start at
# once; every package's tests start when the images are done, with BOXBENCH_CI=1 (a "host lacks
# X" skip is a failure): a test that needs the local cluster, a guest image or the multi-node
# builds waits for it (testenv.Await), the others run meanwhile. Ends by printing where the time
# went (scripts/timing.sh's log, every package's and every slow test's wall time), on failure too.
#
# What runs at once: the clusters' builds are CPU-bound (about 20 CPU-minutes cold, cached by
# version under /var/cache/boxbench; `.ci/run` starts them before `make setup`, scripts/builds.sh,
# and here they only wait for its build locks); the images wait on the mirror and the disk (one
# Debian base, then each database's packages, several at a time); the guest images start from
# Redis's tree as soon as it exists. Each is cached: warm, all cost seconds. The cluster is
# taken down afterwards (on every exit path) unless it was already up. Cold, the tests started
# at +17:35 behind the Kubernetes build and the guest images (2026-11-27 14:49); now they start
# when the images are (+9:19 in the cold run of 2026-11-27 17:52).
#
# The packages' tests: most of their time is waiting (QEMU guests under TCG, JVMs, pods), so
# TEST_P packages run at once (go test -p; default 3). e2e holds one of them for most of the
# run, and bounds its own tests (at most 4 at work, e2e/e2e_test.go); at 2 the other 58
# packages ran one at a time beside it and for 11.5 minutes after it (cold, 2026-11-27 17:52);
# at 4 (cold, 2026-11-27 04:58) a Cassandra start, a guest agent and a PostgreSQL data load
# missed their time limits to the contention. go test starts the packages in the order given:
# the slowest first (SLOW, from the timing report), so that the longest (e2e) is the critical
# path from the start and the others fill the other slots; platform/vm, whose guests compute
# under TCG while they boot, and internal/cgroup/v2test, two short TCG boots, wait for the
# guest images, and platform/kubernetes, last, for the local cluster.
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
# Without cgo, as `make build` (and scripts/builds.sh's early compile) has it: with go's default
# (cgo on when gcc is there) every package that imports net or os/user, and every one above it,
# compiles a second time — 190 cpu-seconds of a cold run's compile (2026-11-27: the test
# packages after `make build`'s, 334 cpu-s with cgo, 143 without). No test needs cgo. Only for
# boxbench's own: the clusters' builds below choose theirs.
CGO_ENABLED=0 go build -o bin/timing ./scripts/timing

pids=()
report() {
  local rc=$?
  if [ ${#pids[@]} -gt 0 ]; then
    kill -- "${pids[@]/#/-}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true   # each records its phase as interrupted
  fi
  # A cluster this run brought up (or was bringing up) goes down on every exit path.
  if [ -n "${cluster_ours:-}" ]; then
    bash scripts/kube-local.sh down >"$logs/cluster-down.log" 2>&1 || rc=1
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
# ended NAME: wait for it; on failure say so with the tail of its log and return non-zero.
ended() {
  if ! wait "${pid_of[$1]}"; then
    echo "test: $1 failed:" >&2
    tail -40 "$logs/$1.log" >&2
    return 1
  fi
}

# prepare NAME CMD...: CMD in the background (timed by its own phases), with NAME.pending in
# $await until it ends and NAME.failed (its status and the end of its log) if it failed. The
# tests start before it ends: those that need it wait for it (testenv.Await, BOXBENCH_AWAIT), the
# others run while it builds.
await=$PWD/out/await
rm -rf "$await"
mkdir -p "$await"
prepare() {
  local name=$1
  shift
  : >"$await/$name.pending"
  setsid bash -c 'log=$1 pending=$2 failed=$3; shift 3
    "$@" >"$log" 2>&1; rc=$?
    if [ "$rc" -ne 0 ]; then { echo "exit status $rc; the end of $log:"; tail -20 "$log"; } >"$failed"; fi
    rm -f "$pending"; exit "$rc"' prepare "$logs/$name.log" "$await/$name.pending" "$await/$name.failed" "$@" &
  pid_of[$name]=$!
  pids+=("$!")
}

if bash scripts/kube-local.sh status >/dev/null 2>&1; then
  prepare local-cluster scripts/timed.sh test/kube-build bash scripts/kube-local.sh build
else
  cluster_ours=1
  prepare local-cluster bash -c 'scripts/timed.sh test/kube-build bash scripts/kube-local.sh build &&
    scripts/timed.sh test/cluster-up bash scripts/kube-local.sh up'
fi
# The multi-node cluster's (scripts/kube-multi.sh sourced gives its functions only), below the
# tests' priority: only e2e's TestKubernetesMultiNode needs them, and it waits for them.
prepare coredns scripts/timed.sh test/coredns nice -n 10 bash -c 'source scripts/kube-multi.sh && build_coredns'
prepare flannel scripts/timed.sh test/flannel nice -n 10 bash -c 'source scripts/kube-multi.sh && build_flannel'
start images "$bin" images build
# Only the guest images the tests boot (platform/vm, internal/cgroup/v2test and e2e boot Redis's);
# `make vm-images` builds the others. At the tests' priority: platform/vm, third of the slow
# packages, holds one of go test's slots while it waits for them.
prepare guest-images scripts/timed.sh test/guest-images "$bin" images build --vm --dbms redis
ended images || exit 1
cat "$logs/images.log"

rc=0
phase_begin test/go-test
# -json for the report; scripts/timing prints what plain `go test ./...` would and keeps the
# stream in out/test.json.
set +e
# platform/kubernetes after the other slow ones: it waits for the local cluster, and would hold
# a slot while it waited.
SLOW=(./e2e ./platform/docker ./platform/vm ./platform/native ./cluster ./runner
      ./platform/swarm ./images/rootfs ./workload/ycsb ./internal/cgroup/v2test ./platform/kubernetes)
# TEST_PKGS names fewer packages (the whole preparation still runs first).
read -ra pkgs <<<"${TEST_PKGS:-${SLOW[*]} ./...}"
BOXBENCH_CI=1 BOXBENCH_BIN=$bin BOXBENCH_AWAIT=$await CGO_ENABLED=0 go test -json -count=1 -timeout 55m -p "${TEST_P:-3}" \
  "${pkgs[@]}" 2>&1 | bin/timing stream -raw out/test.json
rc=${PIPESTATUS[0]}
set -e
phase_end test/go-test "$rc"
# Each ended before the tests that waited for it ran (a failed one failed those tests too);
# the cluster goes down even if its up failed half-way.
for name in guest-images local-cluster coredns flannel; do
  ended "$name" || rc=1
done
if [ -n "${cluster_ours:-}" ]; then
  phase_begin test/cluster-down
  bash scripts/kube-local.sh down || rc=1
  phase_end test/cluster-down
  cluster_ours=
fi
pids=()
exit "$rc"
