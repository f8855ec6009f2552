package telemetry

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/workload"
)

// hostAsGuest reads this host's own files in the guest sampler's format: the guest view's
// parsing is then checked against real kernel files.
func hostAsGuest(group string, extra string) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		var b bytes.Buffer
		for _, f := range []string{"/proc/stat", "/proc/meminfo", "/proc/vmstat", "/proc/loadavg", "/proc/diskstats"} {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			b.WriteString("==> " + f + " <==\n")
			b.Write(data)
		}
		b.WriteString("==> " + group + "/cpu.stat <==\nusage_usec 1000\nuser_usec 600\nsystem_usec 400\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n")
		b.WriteString("==> " + group + "/memory.current <==\n4096\n")
		b.WriteString(extra)
		return b.Bytes(), nil
	}
}

func TestGuestViewSamplesThroughTheMirror(t *testing.T) {
	const group = "/sys/fs/cgroup/boxbench/server"
	g, err := NewGuest(hostAsGuest(group, ""), group)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	clk := workload.Clock{Start: time.Now()}
	s, err := New([]Target{{Source: "db-guest", Guest: g}, {Source: "db-guest-system", GuestSystem: g}}, 100*time.Millisecond, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond)
	samples, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, x := range samples {
		seen[x.Source+"/"+x.Metric] = true
	}
	for _, want := range []string{"db-guest/memory_usage_bytes", "db-guest-system/cpu_user_seconds_per_second",
		"db-guest-system/memory_total_bytes", "db-guest-system/load1", "db-guest-system/guest_read_seconds"} {
		if !seen[want] {
			t.Errorf("no %s among %d samples", want, len(samples))
		}
	}
	// The host's task accounting reads this host's /proc/<pid>: a guest's mirror has none, so
	// the guest has no such figures rather than zeros.
	for _, absent := range []string{"db-guest-system/tasks_cpu_seconds_per_second", "db-guest-system/kernel_threads_cpu_seconds_per_second"} {
		if seen[absent] {
			t.Errorf("%s sampled from a mirror without tasks", absent)
		}
	}
}

// A guest cannot make the host write outside the mirror, or read files it was not asked for.
func TestGuestRefusesForeignPaths(t *testing.T) {
	const group = "/sys/fs/cgroup/boxbench/server"
	for _, bad := range []string{"/etc/passwd", "/proc/../etc/passwd", group + "/../../x", "relative"} {
		g, err := NewGuest(hostAsGuest(group, "==> "+bad+" <==\nroot\n"), group)
		if err != nil {
			t.Fatal(err)
		}
		g.read(context.Background())
		if g.err == nil || !strings.Contains(g.err.Error(), "not one of its files") {
			t.Errorf("%s: %v", bad, g.err)
		}
		g.Close()
	}
}
