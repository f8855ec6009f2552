package hostenv

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The fixtures are /proc/stat and /proc/diskstats captured on the development VM about a
// second apart (a, b) while one CPU spun and dd wrote 200 MiB with O_DIRECT.
func TestBusyFromCapturedProc(t *testing.T) {
	a, err := ReadLoad("testdata/quiet/a/proc")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadLoad("testdata/quiet/b/proc")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.IOTicks["zram0"]; ok {
		t.Error("zram0 counted as a disk")
	}
	cpu, disk, dev := Busy(a, b, time.Second)
	// /proc/stat: 208 busy ticks of 208 (idle and iowait did not move): 100 % busy.
	if math.Abs(cpu-1) > 1e-9 {
		t.Errorf("cpu busy %.3f, want 1", cpu)
	}
	// vda io_ticks 790484 → 790748: 264 ms of 1 s.
	if dev != "vda" || math.Abs(disk-0.264) > 1e-9 {
		t.Errorf("disk %s %.3f, want vda 0.264", dev, disk)
	}
	// The same reading twice: nothing happened.
	if cpu, disk, _ := Busy(a, a, time.Second); cpu != 0 || disk != 0 {
		t.Errorf("no change: cpu %v disk %v", cpu, disk)
	}
}

func TestWaitQuietOnThisHost(t *testing.T) {
	// Thresholds of 100 %: any host is quiet after the first window.
	cfg := QuietConfig{Timeout: 10 * time.Second, Window: 200 * time.Millisecond, CPUBusy: 1, DiskBusy: 1}
	q, err := WaitQuiet(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if q.TimedOut || q.Waited <= 0 {
		t.Errorf("%+v: want a quiet host after one window", q)
	}
	// Thresholds below anything measurable while this test spins a CPU: it must give up at the
	// timeout and say so.
	var stop atomic.Bool
	go func() {
		for !stop.Load() { // spins a CPU on purpose
		}
	}()
	defer stop.Store(true)
	cfg = QuietConfig{Timeout: 600 * time.Millisecond, Window: 200 * time.Millisecond, CPUBusy: 0.001, DiskBusy: 1}
	q, err = WaitQuiet(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !q.TimedOut {
		t.Fatalf("%+v: a spinning CPU counted as quiet", q)
	}
	if s := q.String(cfg); !strings.Contains(s, "not quiet within 600ms") || !strings.Contains(s, "threshold 0 %") {
		t.Errorf("message %q", s)
	}
}
