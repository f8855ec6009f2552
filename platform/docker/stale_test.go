package docker

import (
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
)

// TestStaleProbe: only a probe container older than any live probe can be is removed by
// Cleanup on its own; a fresh probe or another experiment's container is not.
func TestStaleProbe(t *testing.T) {
	old := time.Now().Add(-time.Hour).Unix()
	probe := map[string]string{LabelExperiment: ProbeExperiment, LabelRole: "probe"}
	for _, tc := range []struct {
		c    container.Summary
		want bool
	}{
		{container.Summary{Labels: probe, Created: old}, true},
		{container.Summary{Labels: probe, Created: time.Now().Unix()}, false},
		{container.Summary{Labels: map[string]string{LabelExperiment: "exp-1234abcd", LabelRole: "server"}, Created: old}, false},
		{container.Summary{Labels: map[string]string{LabelExperiment: ProbeExperiment, LabelRole: "server"}, Created: old}, false},
	} {
		if got := staleProbe(tc.c); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.c.Labels, got, tc.want)
		}
	}
}
