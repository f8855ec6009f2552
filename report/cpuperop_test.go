package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/stats"
)

// TestCPUPerOp: the terminal shows the host's softirq CPU per operation for every cell that has
// it, in µs with its spread and n, and nothing for cells without it.
func TestCPUPerOp(t *testing.T) {
	r := &Report{Cells: []*Cell{
		{ID: "platform=swarm/network=overlay", Metrics: []Metric{
			{Name: "client_cpu_per_op_ns", Summary: stats.Summarize([]float64{30000, 32000, 31000})},
			{Name: "host_softirq_cpu_per_op_ns", Summary: stats.Summarize([]float64{12000, 14000, 13000})}}},
		{ID: "platform=native", Metrics: []Metric{{Name: "client_cpu_per_op_ns", Summary: stats.Summarize([]float64{1, 2})}}},
	}}
	var buf bytes.Buffer
	writeCPUPerOp(&buf, r)
	out := buf.String()
	t.Log(out)
	if !strings.Contains(out, "platform=swarm/network=overlay  host softirq 13 µs ±") || !strings.Contains(out, "n=3), client 31 µs") {
		t.Errorf("softirq per op missing or misformatted:\n%s", out)
	}
	if strings.Contains(out, "platform=native") {
		t.Errorf("a cell without the softirq metric is listed:\n%s", out)
	}
}
