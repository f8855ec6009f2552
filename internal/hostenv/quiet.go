package hostenv

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// Load is one reading of the host's activity counters: CPU time by busy and all modes
// (/proc/stat, seconds summed over cpus) and each disk's time spent doing I/O
// (/proc/diskstats io_ticks, ms).
type Load struct {
	CPUBusy, CPUTotal float64
	// CPUSteal is the part of CPUBusy the hypervisor gave to something else (steal).
	CPUSteal float64
	IOTicks  map[string]uint64
}

// ReadLoad reads the counters under procRoot ("/proc" on the host; a captured tree in tests).
// Loop, ram and zram devices are left out: their I/O reaches a real disk (counted there) or
// none.
func ReadLoad(procRoot string) (Load, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return Load{}, err
	}
	st, err := fs.Stat()
	if err != nil {
		return Load{}, fmt.Errorf("read %s/stat: %w", procRoot, err)
	}
	c := st.CPUTotal
	idle := c.Idle + c.Iowait // iowait is idle: a CPU waiting for a disk runs nothing
	busy := c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
	l := Load{CPUBusy: busy, CPUTotal: busy + idle, CPUSteal: c.Steal, IOTicks: map[string]uint64{}}
	bfs, err := blockdevice.NewFS(procRoot, "/sys")
	if err != nil {
		return Load{}, err
	}
	disks, err := bfs.ProcDiskstats()
	if err != nil {
		return Load{}, fmt.Errorf("read %s/diskstats: %w", procRoot, err)
	}
	for _, d := range disks {
		n := d.DeviceName
		if strings.HasPrefix(n, "loop") || strings.HasPrefix(n, "ram") || strings.HasPrefix(n, "zram") {
			continue
		}
		l.IOTicks[n] = d.IOsTotalTicks
	}
	return l, nil
}

// Busy is the host's activity between two readings wall apart: the share of all CPU time that
// was busy (0–1), and the busiest disk's share of wall time spent doing I/O (0–1) with its name.
func Busy(a, b Load, wall time.Duration) (cpu, disk float64, dev string) {
	if dt := b.CPUTotal - a.CPUTotal; dt > 0 {
		cpu = (b.CPUBusy - a.CPUBusy) / dt
	}
	for n, t := range b.IOTicks {
		t0, ok := a.IOTicks[n]
		if !ok || t < t0 || wall <= 0 {
			continue
		}
		if f := float64(t-t0) / float64(wall.Milliseconds()); f > disk {
			disk, dev = f, n
		}
	}
	return min(max(cpu, 0), 1), min(disk, 1), dev
}

// QuietConfig bounds WaitQuiet: the host counts as quiet when, over one Window, at most CPUBusy
// of its CPU time was busy and no disk was busy more than DiskBusy of the time.
type QuietConfig struct {
	Timeout, Window   time.Duration
	CPUBusy, DiskBusy float64
	ProcRoot          string // "" is /proc
}

// Quiet is what a wait found: how long it waited, whether it gave up, and the last window's
// activity (CPU and the busiest disk, shares 0–1).
type Quiet struct {
	Waited            time.Duration
	TimedOut          bool
	CPUBusy, DiskBusy float64
	Disk              string
}

// String says what happened, with the thresholds, for a run's facts and warnings.
func (q Quiet) String(cfg QuietConfig) string {
	last := fmt.Sprintf("cpu %.1f %% busy (threshold %.0f %%), busiest disk %s %.1f %% busy (threshold %.0f %%) over the last %s",
		100*q.CPUBusy, 100*cfg.CPUBusy, orNone(q.Disk), 100*q.DiskBusy, 100*cfg.DiskBusy, cfg.Window)
	if q.TimedOut {
		return fmt.Sprintf("the host was not quiet within %s: %s", cfg.Timeout, last)
	}
	return fmt.Sprintf("quiet after %.1f s: %s", q.Waited.Seconds(), last)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// WaitQuiet reads the host's activity every Window until one window is quiet, Timeout has
// passed (TimedOut), or ctx ends (its error). It waits at least one window: a quiet start is
// a measured fact, never assumed.
func WaitQuiet(ctx context.Context, cfg QuietConfig) (Quiet, error) {
	root := cfg.ProcRoot
	if root == "" {
		root = "/proc"
	}
	start := time.Now()
	prev, err := ReadLoad(root)
	if err != nil {
		return Quiet{}, err
	}
	t0 := start
	for {
		select {
		case <-ctx.Done():
			return Quiet{Waited: time.Since(start)}, ctx.Err()
		case <-time.After(cfg.Window):
		}
		cur, err := ReadLoad(root)
		if err != nil {
			return Quiet{}, err
		}
		now := time.Now()
		var q Quiet
		q.CPUBusy, q.DiskBusy, q.Disk = Busy(prev, cur, now.Sub(t0))
		q.Waited = now.Sub(start)
		if q.CPUBusy <= cfg.CPUBusy && q.DiskBusy <= cfg.DiskBusy {
			return q, nil
		}
		if q.Waited+cfg.Window > cfg.Timeout {
			q.TimedOut = true
			return q, nil
		}
		prev, t0 = cur, now
	}
}
