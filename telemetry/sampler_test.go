package telemetry

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/blockdev"
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
		"context_switches_voluntary_per_second", "memory_rss_bytes", "sched_run_seconds_per_second",
		"sched_wait_seconds_per_second"} {
		if _, ok := m[name]; !ok {
			t.Errorf("%s absent", name)
		}
	}
	dev, err := blockdev.Resolve(dir)
	switch {
	case errors.Is(err, blockdev.ErrNoBlockDevice):
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

// TestClientRunQueueWait makes two threads of this process take turns on one CPU, so that each
// waits for the other, and checks that the client's run-queue wait shows it: a sum over
// threads, which /proc/<pid>/schedstat (the main thread only) would miss.
func TestClientRunQueueWait(t *testing.T) {
	s, err := New([]Target{{Source: "client", PID: os.Getpid()}}, 50*time.Millisecond, testClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var set unix.CPUSet
	set.Set(0)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // the thread ends with the goroutine: its mask goes with it
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				t.Error(err)
				return
			}
			busyFor(400 * time.Millisecond)
		}()
	}
	wg.Wait()
	got, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	var run, wait float64
	for _, x := range got {
		switch x.Metric {
		case "sched_run_seconds_per_second":
			run = max(run, x.Value)
		case "sched_wait_seconds_per_second":
			wait = max(wait, x.Value)
		}
	}
	t.Logf("highest interval rates: run %.2f cores, run-queue wait %.2f seconds/second", run, wait)
	if run == 0 {
		t.Error("two threads spun for 400 ms but sched_run_seconds_per_second is never above 0")
	}
	// Two runnable threads on one CPU: whenever one runs, the other waits.
	if wait < 0.25 {
		t.Errorf("two threads shared one CPU but the highest run-queue wait rate is %.2f seconds/second", wait)
	}
}
