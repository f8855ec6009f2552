package dbms

import (
	"fmt"
	"time"
)

// WindowRule is a validity rule a database offers on what its own server reported about the
// measured window (its Observer's metrics; Traits.WindowRules). The checks apply every rule of
// the cell's database to each server (each node of a cluster), in the order given, and raise
// what a rule finds as a warning with the rule's code, without knowing which database it is.
//
// Contract: a rule is a pure function of w; it returns nil when the window is fine, or when a
// metric it needs is missing (nothing known is not a finding).
type WindowRule func(w WindowFacts) *Finding

// WindowFacts are what a WindowRule reads about one server's measured window.
type WindowFacts struct {
	// Server are the server's server_… metrics for the window (ServerWindow.Metrics).
	Server map[string]float64
	// Wall is the workload's measured window (warm-up excluded).
	Wall time.Duration
	// Ops are the operations of the window, in the run's order, with each one's 99th percentile
	// latency (0 = unknown).
	Ops []OpLatency
}

// OpLatency is one operation type's 99th percentile latency over the window.
type OpLatency struct {
	Op  string
	P99 time.Duration
}

// Metric returns the named server metric.
func (w WindowFacts) Metric(name string) (float64, bool) {
	v, ok := w.Server[name]
	return v, ok
}

// Finding is what a WindowRule found: a warning (severity warning) with the rule's stable code
// (results' warnings[].code) and a message that says the numbers and what they mean.
type Finding struct {
	Code    string
	Message string
}

// FormatBytes renders a byte count with a binary unit, as the checks' messages do.
func FormatBytes(b float64) string {
	const k = 1024
	switch {
	case b >= k*k*k:
		return fmt.Sprintf("%.1f GiB", b/(k*k*k))
	case b >= k*k:
		return fmt.Sprintf("%.1f MiB", b/(k*k))
	case b >= k:
		return fmt.Sprintf("%.1f KiB", b/k)
	}
	return fmt.Sprintf("%.0f B", b)
}
