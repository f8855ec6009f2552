package resource

import (
	"strings"
	"testing"
)

// TestDifferences: only requested controls are compared; an unpinned cpuset and a control the
// platform could not read back (zero) are not differences.
func TestDifferences(t *testing.T) {
	req := Limits{CPUs: 1, Cpuset: "1", MemoryBytes: 512 << 20, CPUWeight: 200, WriteBps: 64 << 20}
	if d := Differences(req, req); len(d) != 0 {
		t.Errorf("equal limits differ: %v", d)
	}
	got := Differences(req, Limits{CPUs: 0.5, Cpuset: "0-1", MemoryBytes: 512 << 20, CPUWeight: 100, IOWeight: 20})
	want := []string{"cpus:", "cpuset:", "cpu_weight:"}
	if len(got) != len(want) {
		t.Fatalf("differences %v, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("difference %d = %q, want %s…", i, got[i], w)
		}
	}
	if d := Differences(Limits{}, Limits{CPUs: 2, Cpuset: "0-1", MemoryBytes: 1 << 30}); len(d) != 0 {
		t.Errorf("an unlimited request differs from the host's capacity: %v", d)
	}
}
