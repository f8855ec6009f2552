package check

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
)

// TestServerRules: the database's rules (Facts.ServerRules) run in their order with the
// server's metrics, the window and each operation's p99, raise warnings with the rule's code,
// and on a cluster run on every node, one warning per code naming the nodes.
func TestServerRules(t *testing.T) {
	var seen dbms.WindowFacts
	count := func(code, metric string) dbms.WindowRule {
		return func(w dbms.WindowFacts) *dbms.Finding {
			seen = w
			if n, ok := w.Metric(metric); ok && n > 0 {
				return &dbms.Finding{Code: code, Message: fmt.Sprintf("%s: %.0f", metric, n)}
			}
			return nil
		}
	}
	rules := []dbms.WindowRule{count("b_code", "server_b_total"), count("a_code", "server_a_total")}
	ops := []OpCount{{Op: "read", Count: 100000, P99: time.Millisecond}}
	ws := Evaluate(Facts{Ops: ops, Wall: 10 * time.Second, ServerRules: rules,
		Server: map[string]float64{"server_a_total": 2, "server_b_total": 1}}, Thresholds{})
	var got []string
	for _, w := range ws {
		got = append(got, w.Code+"/"+string(w.Severity)+"/"+w.Message)
	}
	if want := "b_code/warning/server_b_total: 1,a_code/warning/server_a_total: 2"; strings.Join(got, ",") != want {
		t.Errorf("warnings %v, want %s", got, want)
	}
	if seen.Wall != 10*time.Second || len(seen.Ops) != 1 || seen.Ops[0] != (dbms.OpLatency{Op: "read", P99: time.Millisecond}) {
		t.Errorf("the rule read %+v", seen)
	}
	ws = Evaluate(Facts{Ops: ops, Wall: 10 * time.Second, ServerRules: rules, Nodes: []Node{
		{Name: "n1", Source: "db", Server: map[string]float64{"server_a_total": 0}},
		{Name: "n2", Source: "db-n2", Server: map[string]float64{"server_a_total": 3}}}}, Thresholds{})
	if len(ws) != 1 || ws[0].Code != "a_code" || !strings.Contains(ws[0].Message, "node n2: server_a_total: 3") {
		t.Errorf("on a cluster: %+v", ws)
	}
	if ws := Evaluate(Facts{Ops: ops, Wall: 10 * time.Second, Server: map[string]float64{"server_a_total": 2}}, Thresholds{}); len(ws) != 0 {
		t.Errorf("a database without rules got %+v", ws)
	}
}
