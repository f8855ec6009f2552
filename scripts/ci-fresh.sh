#!/usr/bin/env bash
# Measures CI as it runs on a fresh machine (docs/ci.md): `bash .ci/run` in a fresh clone of
# this repository's main branch, under /usr/bin/time -v, timing log kept.
#
#   scripts/ci-fresh.sh warm   the machine's caches as they are (Go's build and module caches,
#                              /var/cache/boxbench, the boxbench images)
#   scripts/ci-fresh.sh cold   first removes what a new machine lacks: Go's build and module
#                              caches, boxbench's build cache (BOXBENCH_CACHE, default
#                              /var/cache/boxbench) and the engine's boxbench/* images;
#                              Debian's packages stay installed (a truly fresh machine adds
#                              setup/apt, about 5 minutes)
#
# The clone is made in a new directory under /var/tmp and removed at the end; its out/timing.log
# and the time report are copied to out/ci-fresh-<mode>-<time>/ here first.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case $mode in
  warm | cold) ;;
  *) echo "usage: scripts/ci-fresh.sh warm|cold" >&2; exit 64 ;;
esac
export PATH=$PATH:/usr/local/go/bin
command -v /usr/bin/time >/dev/null || { echo "ci-fresh: needs /usr/bin/time (apt-get install -y time)" >&2; exit 1; }
repo=$PWD
keep=$repo/out/ci-fresh-$mode-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$keep"
clone=$(mktemp -d /var/tmp/boxbench-ci-fresh.XXXXXX)
trap 'rm -rf "$clone"' EXIT
git clone -q --branch main "$repo" "$clone/boxbench"
if [ "$mode" = cold ]; then
  go clean -cache -modcache
  rm -rf "${BOXBENCH_CACHE:-/var/cache/boxbench}"
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
    docker images --format '{{.Repository}}:{{.Tag}}' | { grep '^boxbench/' || true; } |
      while read -r ref; do docker image rm -f "$ref" >/dev/null; done
  fi
fi
echo "ci-fresh: $mode run of main at $(git -C "$clone/boxbench" rev-parse --short HEAD), from $(date -u +%H:%M:%S) UTC"
rc=0
( cd "$clone/boxbench" && /usr/bin/time -v -o "$keep/time.txt" bash .ci/run ) >"$keep/ci.log" 2>&1 || rc=$?
cp "$clone/boxbench/out/timing.log" "$keep/" 2>/dev/null || true
echo "ci-fresh: exit $rc at $(date -u +%H:%M:%S) UTC; log, timing and time report in $keep"
exit "$rc"
