#!/usr/bin/env bash
# Builds FerretDB 1.x (a MongoDB wire-protocol server over PostgreSQL) from the Go module proxy
# at a pinned version and caches the binary on this machine by version:
#
#   /var/cache/boxbench/ferretdb/<version>/ferretdb
#
# Debian has no FerretDB and no MongoDB; boxbench's `dbms: ferretdb` runs this binary natively
# and copies the same file (checked by its sha256) into the images. A cached build is reused: a
# second run costs nothing. Prints the binary's path on its last line. Run as root; no argument.
set -euo pipefail

FERRETDB_VERSION=${FERRETDB_VERSION:-v1.24.0}
case "$FERRETDB_VERSION" in
  v1.[0-9]*.[0-9]*) ;;
  *) echo "ferretdb: FERRETDB_VERSION=$FERRETDB_VERSION is not a FerretDB 1.x version (v1.N.M)" >&2; exit 2 ;;
esac
ROOT=${BOXBENCH_FERRETDB_CACHE:-/var/cache/boxbench/ferretdb}
DIR=$ROOT/$FERRETDB_VERSION

built() {
  local v
  [ -x "$DIR/ferretdb" ] && v=$("$DIR/ferretdb" --version 2>/dev/null) &&
    [ "${v%%$'\n'*}" = "version: $FERRETDB_VERSION" ]
}

mkdir -p "$ROOT"
if ! built; then
  # One build at a time on this machine (two setups at once would race on the same directory).
  exec 9>"$ROOT/.lock"
  flock 9
  if ! built; then
    echo "ferretdb: building FerretDB $FERRETDB_VERSION (a few minutes on 2 cores)" >&2
    tmp=$(mktemp -d "$ROOT/.build-XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    start=$(date +%s)
    # `go install pkg@version` asks the proxy for the module's version list, which it refuses
    # for this module, and the module as published lacks the build/version/version.txt that
    # FerretDB's release build generates (the binary refuses to start without it). So: a
    # throwaway module requires the tagged version, a writable copy of its source gets the
    # version file, and a replace directive builds the command from that copy.
    # A static binary: it runs unchanged on the host and in every image.
    mkdir "$tmp/mod"
    (
      cd "$tmp/mod"
      printf 'module throwaway/ferretdb\n\ngo 1.22\n' >go.mod
      GOFLAGS=-mod=mod go get "github.com/FerretDB/FerretDB@$FERRETDB_VERSION"
      src=$(GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' github.com/FerretDB/FerretDB)
      cp -r "$src" "$tmp/src"
      chmod -R u+w "$tmp/src"
      echo "$FERRETDB_VERSION" >"$tmp/src/build/version/version.txt"
      go mod edit -replace "github.com/FerretDB/FerretDB=$tmp/src"
      CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" go build -trimpath -o "$tmp/ferretdb" \
        github.com/FerretDB/FerretDB/cmd/ferretdb
    )
    rm -rf "$tmp/mod" "$tmp/src"
    "$tmp/ferretdb" --version >"$tmp/version.txt"
    echo "$(( $(date +%s) - start ))" >"$tmp/build-seconds"
    sha256sum "$tmp/ferretdb" | cut -d' ' -f1 >"$tmp/ferretdb.sha256"
    rm -rf "$DIR"
    mv "$tmp" "$DIR"
    chmod 755 "$DIR" "$DIR/ferretdb"
    trap - EXIT
    echo "ferretdb: built in $(cat "$DIR/build-seconds") s into $DIR" >&2
  fi
  exec 9>&-
fi
echo "$DIR/ferretdb"
