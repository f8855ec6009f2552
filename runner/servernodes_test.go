package runner

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/workload"
)

// A cluster's windows are stored under per-node names and read back under the plain ones; a
// node that could not be read is named in the warning, the others' metrics still stored.
func TestServerResultNodes(t *testing.T) {
	win := func(v float64) dbms.ServerWindow {
		return dbms.ServerWindow{Metrics: map[string]float64{"server_gc_pauses_total": v}, Span: 5 * time.Second}
	}
	o := serverOutcome{ran: true, nodes: []nodeWindow{
		{node: "n1", win: win(1)},
		{node: "n2", win: dbms.ServerWindow{Metrics: map[string]float64{"server_gc_pauses_total": 2}, Missing: []string{"server_heap_used_bytes: no heap"}}},
		{node: "n3", err: errors.New("at the start of the window: unreachable")},
	}}
	res := &workload.Result{}
	facts := map[string]string{}
	ws := serverResult(o, res, facts)
	want := map[string]float64{"server_gc_pauses_total": 1, "server_window_seconds": 5, "server_n2_gc_pauses_total": 2}
	if !maps.Equal(res.Metrics, want) {
		t.Errorf("metrics %v, want %v", res.Metrics, want)
	}
	if f := facts["server_metrics_missing"]; f != "node n2: server_heap_used_bytes: no heap" {
		t.Errorf("missing %q", f)
	}
	if len(ws) != 1 || ws[0].Code != CodeServerCounters || !strings.Contains(ws[0].Message, "node n3: at the start of the window: unreachable") {
		t.Errorf("warnings %+v", ws)
	}
	for i, tc := range []struct {
		node string
		want map[string]float64
	}{
		{"n1", map[string]float64{"server_gc_pauses_total": 1, "server_window_seconds": 5}},
		{"n2", map[string]float64{"server_gc_pauses_total": 2}},
		{"n3", nil},
	} {
		if got := serverMetrics(res.Metrics, i, tc.node); !maps.Equal(got, tc.want) {
			t.Errorf("node %s: %v, want %v", tc.node, got, tc.want)
		}
	}
	// A single server: its metrics, no node names.
	single := map[string]float64{"server_forks_total": 1, "client_cpu": 3}
	if got := serverMetrics(single, 0, ""); !maps.Equal(got, map[string]float64{"server_forks_total": 1}) {
		t.Errorf("single server: %v", got)
	}
}
