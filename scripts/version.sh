#!/usr/bin/env bash
# Prints this checkout's version: version/VERSION's semantic version, with build metadata when
# the commit is not the release's own — the commits since its tag (vVERSION) and the commit, and
# "dirty" when the tree holds changes (what `go build` records as vcs.modified: any line of
# `git status --porcelain`):
#   0.1.0                 at the tag v0.1.0, or before it exists, clean
#   0.1.0+3.g1a2b3c4      3 commits after v0.1.0
#   0.1.0+dirty           modified, at the tag or before it exists
#   0.1.0+3.g1a2b3c4.dirty
# Outside a git checkout it is VERSION's. `make build` and `make release` link it in.
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(tr -d '[:space:]' <version/VERSION)
# SemVer 2.0.0's core and pre-release (no build metadata: that is this script's to add).
num='(0|[1-9][0-9]*)'
ident='([0-9A-Za-z-]+)'
if ! [[ $base =~ ^$num\.$num\.$num(-$ident(\.$ident)*)?$ ]]; then
  echo "version/VERSION: \"$base\" is not a semantic version (valid: MAJOR.MINOR.PATCH, e.g. 0.1.0)" >&2
  exit 1
fi
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "$base"
  exit 0
fi
meta=()
# --long: "v0.1.0-3-g1a2b3c4" (0 at the tag itself); no tag of this version: nothing.
if desc=$(git describe --tags --long --match "v$base" 2>/dev/null); then
  rest=${desc#"v$base-"}
  distance=${rest%%-*}
  if [ "$distance" != 0 ]; then
    meta+=("$distance" "${rest#*-}")
  fi
fi
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  meta+=(dirty)
fi
if [ ${#meta[@]} -eq 0 ]; then
  echo "$base"
else
  (IFS=.; echo "$base+${meta[*]}")
fi
