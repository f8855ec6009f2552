package version

import (
	"regexp"
	"testing"
)

// TestVersion: VERSION holds a semantic version (SemVer 2.0.0's core and pre-release; build
// metadata is scripts/version.sh's to add), and a test binary, which has neither linker flags
// nor Go's record of git, reports it and "unknown" for the commit. What a built binary
// prints is scripts/release's TestBuildVersion.
func TestVersion(t *testing.T) {
	num := `(0|[1-9][0-9]*)`
	semver := regexp.MustCompile(`^` + num + `\.` + num + `\.` + num + `(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	if !semver.MatchString(Base()) {
		t.Errorf("VERSION %q is not a semantic version (MAJOR.MINOR.PATCH)", Base())
	}
	if Version() != Base() || Commit() != "unknown" {
		t.Errorf("Version() = %q, Commit() = %q; want %q and unknown", Version(), Commit(), Base())
	}
}
