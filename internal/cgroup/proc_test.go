package cgroup

import (
	"os"
	"strings"
	"testing"
)

// The fixture is /proc/<pid>/cgroup of a container started by Docker 20.10 (cgroupfs driver) on
// a cgroup v1 hybrid host; its "0::" line is the (empty) unified hierarchy's view, which is the
// line a v2 host has alone.
func TestParseProcCgroup(t *testing.T) {
	const want = "/docker/9b06bea4563b2ef00c00d247b1d47e0133ae519930489a401d708b2f001a1016"
	for _, v := range []Version{V1, V2} {
		f, err := os.Open("testdata/proc-cgroup-v1-hybrid")
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseProcCgroup(f, v)
		f.Close()
		if err != nil || got != want {
			t.Errorf("v%d: %q %v, want %q", v, got, err, want)
		}
	}
	if _, err := parseProcCgroup(strings.NewReader("1:cpu:/x\n"), V1); err == nil {
		t.Error("no memory line: no error")
	}
}
