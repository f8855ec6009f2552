#!/usr/bin/env bash
# The early build phase of CI (docs/ci.md): what the local clusters run, built from source
# through the Go module proxy, each a timed phase of its own and all at once —
#
#   build/kube      the Kubernetes components and the pause image (scripts/kube-local.sh build)
#   build/coredns   the multi-node cluster's DNS (build_coredns of scripts/kube-multi.sh)
#   build/flannel   its VXLAN CNI (build_flannel of scripts/kube-multi.sh; sourced: functions only)
#   build/boxbench  boxbench's own packages, compiled into Go's build cache for `make build`
#   build/boxbench-arm64  the same for linux/arm64, for `make release`
#
# They need only Go and gcc (kube's and flannel's cgo, the pause program), not `make setup`'s
# packages, so `.ci/run` starts this beside `make setup` instead of after `make build`: cold,
# they are the longest builds (about 20 CPU-minutes together). Each is cached by version under
# $BOXBENCH_CACHE (default /var/cache/boxbench) and built under its own file lock; `make test`
# runs the same builds again before the tests (scripts/test.sh), which wait on that lock while
# this still builds and cost seconds once it is done. Exits non-zero if any build failed.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/timing.sh

# The machine image has gcc; on one without it, `make setup`'s apt installs it: wait for that
# (bounded: apt's install takes minutes) before the builds that need it begin.
need_gcc() {
  local i
  for ((i = 0; i < 360; i++)); do
    command -v gcc >/dev/null && return 0
    sleep 5
  done
  echo "builds: gcc did not appear in 30 min (make setup installs it)" >&2
  return 1
}

# Below the chain the tests start behind (setup, `make build`, the images): the tests no longer
# wait for these builds, only the tests that use a cluster do (testenv.Await), so they take what
# that chain and the tests leave. Cold on 2 cpus the total did not depend on it (docs/notebook/ci-log.md): at
# nice 0 the Kubernetes build ended at +27 and the tests started at +12:51 (2026-11-27 19:59,
# 45:59); at nice 10 it ended at +37 and the tests started at +10:43 (21:00, 45:58) — the cpus
# are saturated until the builds end, and the run's 75 cpu-minutes are what bound it.
pids=()
nice -n 10 scripts/timed.sh build/coredns bash -c 'source scripts/kube-multi.sh && build_coredns' &
pids+=("$!")
(need_gcc && exec nice -n 10 scripts/timed.sh build/kube bash scripts/kube-local.sh build) &
pids+=("$!")
(need_gcc && exec nice -n 10 scripts/timed.sh build/flannel bash -c 'source scripts/kube-multi.sh && build_flannel') &
pids+=("$!")
# boxbench's own packages into Go's build cache (nothing is written but the cache): cold, `make
# build` after `make setup` took 5 minutes at the head of the chain that ends in the guest images
# (2026-11-27); compiled here beside setup, `make build` only links. CGO and -trimpath as `make
# build` has them. The arm64 compile is `make release`'s other half, for release.TestRelease
# (cold, several cpu-minutes): below the tests' priority here, not beside them in the tests.
CGO_ENABLED=0 scripts/timed.sh build/boxbench go build -trimpath -o /dev/null ./cmd/boxbench &
pids+=("$!")
CGO_ENABLED=0 GOOS=linux GOARCH=arm64 nice -n 10 scripts/timed.sh build/boxbench-arm64 \
  go build -trimpath -o /dev/null ./cmd/boxbench &
pids+=("$!")
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
exit "$rc"
