#!/usr/bin/env bash
# Builds gVisor's runsc and its containerd shim (containerd-shim-runsc-v1) from the Go module
# proxy at a pinned version of the `go` branch, and caches both on this machine by version:
#
#   /var/cache/boxbench/runsc/<version>/{runsc,containerd-shim-runsc-v1}
#
# Debian's runsc (2022) cannot start a sandbox on recent kernels (it mis-detects the root
# network namespace), so boxbench builds its own. A cached build is reused: a second run costs
# nothing. The cold build takes ~5 min on 2 cores (docs/runtimes.md). Prints the cache
# directory on its last line. Run as root; no argument.
set -euo pipefail

# The `go` branch of gVisor (the layout `go build` understands), pinned. The module has no
# replace directives, so `go install pkg@version` builds it as its go.mod says.
GVISOR_VERSION=${GVISOR_VERSION:-v0.0.0-20260701204157-69c2d17aea96}
case "$GVISOR_VERSION" in
  v0.0.0-[0-9]*-[0-9a-f]*) ;;
  *) echo "runsc: GVISOR_VERSION=$GVISOR_VERSION is not a pseudo-version (v0.0.0-<date>-<commit>)" >&2; exit 2 ;;
esac
ROOT=${BOXBENCH_RUNSC_CACHE:-${BOXBENCH_CACHE:-/var/cache/boxbench}/runsc}
DIR=$ROOT/$GVISOR_VERSION

built() {
  local v
  [ -x "$DIR/runsc" ] && [ -x "$DIR/containerd-shim-runsc-v1" ] && v=$("$DIR/runsc" --version 2>/dev/null) &&
    [ "${v%%$'\n'*}" = "runsc version $GVISOR_VERSION" ]
}

mkdir -p "$ROOT"
if ! built; then
  # One build at a time on this machine (two setups at once would race on the same directory).
  exec 9>"$ROOT/.lock"
  flock 9
  if ! built; then
    echo "runsc: building gVisor $GVISOR_VERSION (runsc and containerd-shim-runsc-v1; a few minutes on 2 cores)" >&2
    tmp=$(mktemp -d "$ROOT/.build-XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    start=$(date +%s)
    # Static binaries, as upstream ships them; the version string is what `runsc --version` and
    # boxbench's facts show.
    GOBIN=$tmp CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install -trimpath \
      -ldflags "-X gvisor.dev/gvisor/runsc/version.version=$GVISOR_VERSION" \
      "gvisor.dev/gvisor/runsc@$GVISOR_VERSION" "gvisor.dev/gvisor/shim@$GVISOR_VERSION"
    mv "$tmp/shim" "$tmp/containerd-shim-runsc-v1"
    echo "$(( $(date +%s) - start ))" >"$tmp/build-seconds"
    rm -rf "$DIR"
    mv "$tmp" "$DIR"
    chmod 755 "$DIR"
    trap - EXIT
    echo "runsc: built in $(cat "$DIR/build-seconds") s into $DIR" >&2
  fi
  exec 9>&-
fi
echo "$DIR"
