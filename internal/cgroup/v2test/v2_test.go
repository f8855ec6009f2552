package v2test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostcg"
	"github.com/boxbench/boxbench/platform/native"
	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/workload"
)

// GuestEnv is set by the test bed's init script; without it the guest tests skip (a plain skip,
// also under BOXBENCH_CI: the test bed, not this host, is where they run).
const GuestEnv = "BOXBENCH_V2GUEST"

// limits are every limit and weight boxbench knows, as each guest test requests them.
var limits = resource.Limits{CPUs: 0.5, Cpuset: "0", MemoryBytes: 256 << 20, CPUWeight: 200, IOWeight: 300,
	ReadBps: 96 << 20, WriteBps: 64 << 20, ReadIOPS: 2000, WriteIOPS: 1000}

// inGuest skips outside the test bed and fails when the guest is not v2 only.
func inGuest(t *testing.T) {
	t.Helper()
	if os.Getenv(GuestEnv) == "" {
		t.Skip("runs inside the cgroup v2 test bed (go test ./internal/cgroup/v2test -run TestBed)")
	}
	if cgroup.HostMode() != "v2" {
		t.Fatalf("the guest's cgroups are %s, want v2 only", cgroup.HostMode())
	}
	if _, err := os.Stat(filepath.Join(cgroup.Root, "boxbench")); err == nil {
		t.Fatal("/sys/fs/cgroup/boxbench exists before the test")
	}
}

// workDir is a fresh directory on the guest's root disk that the server's user can reach.
func workDir(t *testing.T) string {
	t.Helper()
	work, err := os.MkdirTemp("/var/tmp", "v2bed-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	return work
}

// TestNativeOnV2 provisions Redis on the native platform with every limit and weight, reads
// each one from the kernel's own files, samples the box's cgroup, tears down, and checks that
// nothing boxbench created under /sys/fs/cgroup remains.
func TestNativeOnV2(t *testing.T) {
	inGuest(t)
	var d dbms.DBMS = redis.Redis{}
	work := workDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := native.New().Provision(ctx, platform.Request{Experiment: "v2bed", Run: "r1", WorkDir: filepath.Join(work, "r1"),
		DBMS: d, Choice: platform.Choice{Storage: storage.Bind, Network: "host"}, Resources: limits})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Teardown(context.Background())
	checkBox(ctx, t, b)
	if err := b.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cgroup.Root, "boxbench")); !os.IsNotExist(err) {
		left, _ := filepath.Glob(filepath.Join(cgroup.Root, "boxbench", "*"))
		t.Errorf("/sys/fs/cgroup/boxbench remains after teardown: %v %v", err, left)
	}
}

// checkBox asserts that every limit and weight of limits is in the kernel's files of b's group
// and in b's read-back, and that telemetry samples the group's cpu, memory, io and pressure.
func checkBox(ctx context.Context, t *testing.T, b platform.Box) {
	t.Helper()
	obs := b.Observe()
	if obs.Cgroup == nil || obs.Cgroup.Layout() != cgroup.V2 {
		t.Fatalf("observation %+v", obs)
	}
	dir := obs.Cgroup.Dir("")
	t.Logf("V2BED group %s", dir)
	file := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("read %s: %v", name, err)
		}
		return strings.TrimSpace(string(b))
	}
	for name, want := range map[string]string{
		"cpu.max": "50000 100000", "cpuset.cpus": "0", "memory.max": fmt.Sprint(256 << 20), "cpu.weight": "200",
	} {
		if got := file(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	dev := hostcg.Device(obs.DataDir) // the data directory's device, as the box resolves it
	iomax := file("io.max")
	want := fmt.Sprintf("%s rbps=%d wbps=%d riops=2000 wiops=1000", dev, 96<<20, 64<<20)
	if dev == "" || !strings.Contains(iomax, want) {
		t.Errorf("io.max = %q, want a line %q (data device %q)", iomax, want, dev)
	}
	// io.weight: the file exists with blk-iocost or bfq; the kernel keeps the weight even when
	// the device's scheduler ignores it, and the box says so.
	applied := b.Applied()
	t.Logf("V2BED io.weight file: %q; applied %+v", fileOr(dir, "io.weight"), applied.How)
	if w := fileOr(dir, "io.weight"); w != "" && !strings.Contains(w, "default 300") {
		t.Errorf("io.weight = %q, want default 300", w)
	}
	if got := applied.Limits; got.CPUs != 0.5 || got.Cpuset != "0" || got.MemoryBytes != 256<<20 || got.CPUWeight != 200 ||
		got.ReadBps != limits.ReadBps || got.WriteBps != limits.WriteBps || got.ReadIOPS != 2000 || got.WriteIOPS != 1000 {
		t.Errorf("read back %+v, want %+v", got, limits)
	}
	for _, w := range b.Warnings() {
		t.Logf("V2BED box warning %s: %s", w.Code, w.Message)
		if w.Code == "shares_failed" {
			t.Errorf("warning %s: %s", w.Code, w.Message)
		}
	}
	checkTelemetry(ctx, t, b, obs)
}

// checkTelemetry samples the box's group while it writes to its data directory and asserts that
// cpu.stat, memory.stat, io.stat and PSI each gave their metrics.
func checkTelemetry(ctx context.Context, t *testing.T, b platform.Box, obs platform.Observation) {
	t.Helper()
	clk := workload.Clock{Start: time.Now()}
	s, err := telemetry.New([]telemetry.Target{{Source: "db", Cgroup: obs.Cgroup}}, 200*time.Millisecond, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Some I/O in the box, so io.stat has a line for the device.
	if _, err := b.Exec(ctx, []string{"sh", "-c", "dd if=/dev/zero of=" + b.DataDir() + "/v2bed.io bs=64k count=64 oflag=direct && sync"}); err != nil {
		t.Logf("I/O in the box: %v", err)
	}
	time.Sleep(1500 * time.Millisecond)
	samples, err := s.Stop()
	if err != nil {
		t.Errorf("telemetry: %v", err)
	}
	seen := map[string]bool{}
	for _, x := range samples {
		seen[x.Metric] = true
	}
	for _, m := range []string{"cpu_usage_seconds_per_second", "cpu_periods_per_interval", "memory_usage_bytes",
		"memory_rss_bytes", "io_write_bytes_per_second", "pressure_cpu_some_seconds_per_second",
		"pressure_memory_some_seconds_per_second", "pressure_io_some_seconds_per_second"} {
		if !seen[m] {
			t.Errorf("telemetry lacks %s", m)
		}
	}
	t.Logf("V2BED telemetry: %d samples, %d metrics", len(samples), len(seen))
}

func fileOr(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
