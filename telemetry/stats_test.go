package telemetry

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// source is a Stats reader whose values the test sets, like a kubelet that refreshes its
// numbers on its own schedule.
type source struct {
	mu  sync.Mutex
	vs  map[string]float64
	at  time.Time
	err error
}

func (s *source) set(at time.Time, vs map[string]float64) {
	s.mu.Lock()
	s.vs, s.at = vs, at
	s.mu.Unlock()
}

func (s *source) read(context.Context) (map[string]float64, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vs, s.at, s.err
}

// TestStatsStampedBySource: values are stamped with the source's time, a read with no newer
// values adds nothing, and rates span the source's own interval.
func TestStatsStampedBySource(t *testing.T) {
	clk := testClock()
	src := &source{}
	src.set(clk.Start.Add(-2*time.Second), map[string]float64{"cpu_usage_seconds_total": 10, "memory_working_set_bytes": 1 << 20})
	s, err := newSampler([]Target{{Source: "db", Stats: &Stats{Via: "test source", Read: src.read}}}, time.Hour, clk, nil, hostRoots)
	if err != nil {
		t.Fatal(err)
	}
	s.tick() // baseline
	s.tick() // same values: nothing
	src.set(clk.Start.Add(8*time.Second), map[string]float64{"cpu_usage_seconds_total": 15, "memory_working_set_bytes": 2 << 20})
	s.tick()
	s.tick()
	var rates []Sample
	ws := 0
	for _, x := range s.samples {
		switch x.Metric {
		case "cpu_usage_seconds_per_second":
			rates = append(rates, x)
		case "memory_working_set_bytes":
			ws++
		}
	}
	checkDocumented(t, s.samples)
	if len(rates) != 1 || ws != 2 {
		t.Fatalf("got %d rates and %d working-set gauges, want 1 and 2 (one per new read): %+v", len(rates), ws, s.samples)
	}
	if r := rates[0]; r.T != 8*time.Second || r.Value != 0.5 {
		t.Errorf("rate %g at %v, want 0.5 cores at 8s (5 s of CPU over the source's 10 s)", r.Value, r.T)
	}
}

// TestStatsRefusesOtherMetrics: a source cannot inject host or client metrics, and a failed
// read is a failed read.
func TestStatsRefusesOtherMetrics(t *testing.T) {
	clk := testClock()
	src := &source{}
	src.set(clk.Start, map[string]float64{"cpu_softirq_seconds_total": 1})
	c := &statsCollector{s: &Stats{Via: "test source", Read: src.read}}
	if err := c.collect(reading{}); err == nil {
		t.Error("a host metric from a stats source was accepted")
	}
	src.err = errors.New("kubelet unreachable")
	if err := c.collect(reading{}); err == nil || errors.Is(err, errNoNewRead) {
		t.Errorf("failed read: %v", err)
	}
	if _, err := New([]Target{{Source: "db", Stats: &Stats{Read: src.read}}}, time.Second, clk, nil); err == nil {
		t.Error("a stats source without a name was accepted")
	}
}
