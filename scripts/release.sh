#!/usr/bin/env bash
# make release: static binaries of boxbench VERSION for linux/amd64 and linux/arm64, its manual
# pages and shell completions, and SHA256SUMS of them all, in DIST (docs/ci.md, "Releases"):
#   boxbench-VERSION-linux-amd64, boxbench-VERSION-linux-arm64
#   man/boxbench.1, man/boxbench-COMMAND.1 ...
#   completion/boxbench.bash, completion/_boxbench (zsh), completion/boxbench.fish
#   SHA256SUMS                  (`sha256sum -c SHA256SUMS` in DIST checks them)
# Inputs from the Makefile's environment: VERSION, GO, LDFLAGS, DIST. DIST must be new, empty or
# an earlier release's (it holds SHA256SUMS): the files that SHA256SUMS lists are replaced,
# anything else in it is left alone and not listed.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${VERSION:?}" "${GO:=go}" "${LDFLAGS:?}" "${DIST:?}"
case $VERSION in
  *dirty*) echo "release: $VERSION is built from a modified tree (a release is a clean checkout of its tag)" >&2 ;;
esac

mkdir -p "$DIST"
if [ -f "$DIST/SHA256SUMS" ]; then
  # An earlier release's: remove what it listed (relative names only, none leaving DIST).
  while read -r _ name; do
    case $name in
      /*|*..*|'') echo "release: $DIST/SHA256SUMS lists \"$name\"; not removing it" >&2; exit 1 ;;
    esac
    rm -f "$DIST/$name"
  done <"$DIST/SHA256SUMS"
  rm -f "$DIST/SHA256SUMS"
  rmdir "$DIST/man" "$DIST/completion" 2>/dev/null || true
elif [ -n "$(ls -A "$DIST")" ]; then
  echo "release: $DIST holds files that are not a release's (valid: a new or empty directory, or an earlier release's)" >&2
  exit 1
fi

# -s -w: no symbol table and no DWARF (85 MB instead of 120 for amd64); a panic's trace still
# names functions and lines. `make build`'s binary keeps them, for a debugger.
files=()
for arch in amd64 arm64; do
  name=boxbench-$VERSION-linux-$arch
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch "$GO" build -trimpath -ldflags "-s -w $LDFLAGS" -o "$DIST/$name" ./cmd/boxbench
  files+=("$name")
done
# The pages' date is the commit's, so one commit gives the same pages whenever it is built.
written=$(SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s) \
  CGO_ENABLED=0 "$GO" run -trimpath ./cmd/gendocs -version "$VERSION" -out "$DIST")
while IFS= read -r f; do files+=("$f"); done <<<"$written"
(cd "$DIST" && sha256sum -- "${files[@]}" >SHA256SUMS)
echo "release: ${#files[@]} files and SHA256SUMS in $DIST"
