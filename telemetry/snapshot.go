package telemetry

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/workload"
)

// Snapshot is a control group's cumulative counters and gauges at one moment, for totals over
// a window (e.g. throttled periods over the measured window: ReadSnapshot at its start and end,
// then Since).
type Snapshot struct {
	// T is when the values were read, as an offset from Clock.Start.
	T time.Duration `json:"t_ns"`
	// Values holds cumulative counters ("*_total": cpu_usage_seconds_total,
	// cpu_throttled_periods_total, io_read_bytes_total, ...) and gauges (memory_usage_bytes, ...)
	// under the names listed in metrics.go. A value the kernel does not offer is missing.
	Values map[string]float64 `json:"values"`
}

// ReadSnapshot reads the group's values once. It fails when the group does not exist or a file
// cannot be parsed.
func ReadSnapshot(ref cgroup.Ref, clk workload.Clock) (Snapshot, error) {
	c, err := newCgroupCollector(ref, hostRoots)
	if err != nil {
		return Snapshot{}, fmt.Errorf("telemetry: %w", err)
	}
	return snapshotOf(c, clk)
}

func snapshotOf(c collector, clk workload.Clock) (Snapshot, error) {
	r := reading{}
	if err := c.collect(r); err != nil {
		return Snapshot{}, fmt.Errorf("telemetry: %s: %w", c.name(), err)
	}
	s := Snapshot{T: clk.Since(time.Now()), Values: make(map[string]float64, len(r))}
	for k, v := range r {
		s.Values[k.metric] = v
	}
	return s, nil
}

// Since returns, for each cumulative counter present in both snapshots, its increase from
// earlier to s, under the counter's "_total" name. A counter that went backwards (the group was
// recreated) is left out.
func (s Snapshot) Since(earlier Snapshot) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s.Values {
		if !strings.HasSuffix(k, "_total") {
			continue
		}
		if p, ok := earlier.Values[k]; ok && v >= p {
			out[k] = v - p
		}
	}
	return out
}
