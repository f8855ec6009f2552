// Package version is boxbench's own version and the commit it was built from.
//
// The version is the repository's data, the file VERSION beside this one (a semantic version,
// MAJOR.MINOR.PATCH, changed only when a release is cut: docs/ci.md, "Releases"). `make build`
// and `make release` link the full version in, which scripts/version.sh derives from VERSION
// and git (the commits since the release's tag and a modified tree as build metadata:
// 0.1.0+3.g1a2b3c4.dirty), and the commit:
//
//	-ldflags "-X github.com/boxbench/boxbench/version.linkedVersion=... -X ...linkedCommit=..."
//
// A plain `go build` or `go install` links neither: the version is VERSION's and the commit is
// the one Go recorded from git (vcs.revision), with "+dirty" when the tree was modified.
package version

import (
	_ "embed"
	"runtime/debug"
	"strings"
)

//go:embed VERSION
var file string

// Set by the linker; empty unless the Makefile built the binary.
var (
	linkedVersion = ""
	linkedCommit  = ""
)

// Base is VERSION's semantic version, without build metadata.
func Base() string { return strings.TrimSpace(file) }

// Version is this binary's version: the one linked in, or Base with "+dirty" when Go recorded
// a modified tree.
func Version() string {
	if linkedVersion != "" {
		return linkedVersion
	}
	if vcs("vcs.modified") == "true" {
		return Base() + "+dirty"
	}
	return Base()
}

// Commit is the full commit hash this binary was built from: the one linked in, or the one Go
// recorded, or "unknown" (`go test`, `go run`, a build outside git or with -buildvcs=false).
func Commit() string {
	if linkedCommit != "" {
		return linkedCommit
	}
	if c := vcs("vcs.revision"); c != "" {
		return c
	}
	return "unknown"
}

// vcs is the build setting key Go recorded, or "".
func vcs(key string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
