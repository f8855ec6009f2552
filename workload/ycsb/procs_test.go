package ycsb

import (
	"runtime"
	"testing"
	"time"
)

// TestProcs checks the GOMAXPROCS policy of a run: adaptive starts at one P and adds one per
// busy interval up to the process's setting, fixed sets its value, negative leaves it, and
// the process's setting comes back at the end.
func TestProcs(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(orig)
	runtime.GOMAXPROCS(3)
	t0 := time.Unix(0, 0)
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

	p := startProcs(0, 0, t0)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("adaptive run started with GOMAXPROCS %d, want 1", got)
	}
	p.adapt(sec(0.5), t0.Add(time.Second)) // half a core on one P: not busy
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("after an interval at 50 %%: GOMAXPROCS %d, want 1", got)
	}
	p.adapt(sec(1.45), t0.Add(2*time.Second)) // 0.95 of a core: busy
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("after a busy interval: GOMAXPROCS %d, want 2", got)
	}
	p.adapt(sec(3.3), t0.Add(3*time.Second)) // 1.85 of 2 cores: busy
	p.adapt(sec(6.3), t0.Add(4*time.Second)) // 3 cores: busy, but 3 is the ceiling
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("after busy intervals: GOMAXPROCS %d, want the ceiling 3", got)
	}
	if got := p.stop(); got != 3 {
		t.Errorf("stop reports %d, want 3", got)
	}
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("after the run: GOMAXPROCS %d, want the process's 3", got)
	}

	p = startProcs(2, 0, t0)
	q := startProcs(1, 0, t0) // a second run at the same time leaves GOMAXPROCS alone
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("fixed run: GOMAXPROCS %d, want 2", got)
	}
	p.adapt(sec(5), t0.Add(time.Second)) // fixed: never adds
	q.stop()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("the second run's end changed GOMAXPROCS to %d", got)
	}
	p.stop()

	p = startProcs(-1, 0, t0)
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("negative setting: GOMAXPROCS %d, want 3 left alone", got)
	}
	p.stop()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("after a run that left it: GOMAXPROCS %d, want 3", got)
	}
}
