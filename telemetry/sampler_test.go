package telemetry

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/boxbench/boxbench/workload"
)

func testClock() workload.Clock { return workload.Clock{Start: time.Now()} }

// TestSamplerOnThisHost runs the sampler for real against this host, this test process and a
// temporary directory: no cgroup and no root needed.
func TestSamplerOnThisHost(t *testing.T) {
	clk := testClock()
	dir := t.TempDir()
	s, err := New([]Target{
		{Source: "host", Host: true, DataDir: dir},
		{Source: "client", PID: os.Getpid()},
	}, 100*time.Millisecond, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stop(); err != nil {
		t.Fatalf("Stop before Start: %v", err)
	}
	s, err = New([]Target{
		{Source: "host", Host: true, DataDir: dir},
		{Source: "client", PID: os.Getpid()},
	}, 100*time.Millisecond, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err == nil {
		t.Error("second Start: no error")
	}
	busyFor(350 * time.Millisecond)
	before := time.Now()
	got, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	again, err2 := s.Stop()
	if len(again) != len(got) || !errors.Is(err2, err) {
		t.Error("Stop is not idempotent")
	}
	checkDocumented(t, got)

	end := clk.Since(before) + 50*time.Millisecond
	ticks := map[time.Duration]bool{}
	var clientCPU float64
	for i, x := range got {
		if i > 0 && x.T < got[i-1].T {
			t.Fatalf("samples not ordered by time at %d", i)
		}
		if x.T < 0 || x.T > end {
			t.Errorf("sample %+v outside [0, %v]", x, end)
		}
		if x.Source == "client" && x.Metric == "cpu_user_seconds_per_second" {
			ticks[x.T] = true
			clientCPU += x.Value
		}
	}
	// Baseline at Start, ticks at 100, 200, 300 ms, and the last reading at Stop.
	if len(ticks) < 3 {
		t.Errorf("%d client CPU samples, want >= 3", len(ticks))
	}
	if clientCPU == 0 {
		t.Error("client spun for 350 ms but its CPU rate is always 0")
	}
	m := byMetric(got)
	for _, name := range []string{"cpu_idle_seconds_per_second", "memory_available_bytes", "load1",
		"context_switches_voluntary_per_second", "memory_rss_bytes"} {
		if _, ok := m[name]; !ok {
			t.Errorf("%s absent", name)
		}
	}
	dev, err := ResolveDevice(dir)
	switch {
	case errors.Is(err, ErrNoBlockDevice):
		t.Logf("temp dir %s is on no block device: no disk metrics expected", dir)
	case err != nil:
		t.Fatal(err)
	default:
		if _, ok := m["disk_read_ops_per_second{"+dev.Name+"}"]; !ok {
			t.Errorf("disk metrics for %s absent", dev)
		}
	}
}

// TestSamplerStopsWithContext checks that ending Start's context ends sampling and Stop still
// returns what was sampled.
func TestSamplerStopsWithContext(t *testing.T) {
	s, err := New([]Target{{Source: "client", PID: os.Getpid()}}, 20*time.Millisecond, testClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(70 * time.Millisecond)
	cancel()
	<-s.done
	got, err := s.Stop()
	if err != nil || len(got) == 0 {
		t.Fatalf("Stop after cancel: %d samples, %v", len(got), err)
	}
}

// busyFor spins the calling goroutine, so this process has CPU time to measure.
func busyFor(d time.Duration) {
	end := time.Now().Add(d)
	x := 0
	for time.Now().Before(end) {
		x++
	}
	_ = x
}
