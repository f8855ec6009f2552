// Package version is boxbench's own version, set at build time by the Makefile:
//
//	-ldflags "-X github.com/boxbench/boxbench/version.Version=... -X ...Commit=..."
package version

import "runtime/debug"

// Set by the linker; the defaults are what `go run` and `go test` see.
var (
	Version = "0.1.0-dev"
	Commit  = ""
)

// CommitOrVCS returns the commit set at build time, or the one Go embedded, or "unknown".
func CommitOrVCS() string {
	if Commit != "" {
		return Commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
