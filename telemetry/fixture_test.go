package telemetry

import (
	"archive/tar"
	"bufio"
	"errors"
	"github.com/boxbench/boxbench/internal/resource"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"

	"github.com/boxbench/boxbench/internal/blockdev"
	"github.com/boxbench/boxbench/internal/cgroup"
)

// The fixture tree testdata/hybrid was captured by testdata/capture.sh on this project's
// hybrid cgroup host: a container limited to 0.5 CPU and 256 MiB, spinning on two goroutines
// and holding 64 MiB, read twice (t0, t1) about 1.5 s apart. See testdata/README.md.

const fixtureDir = "testdata/hybrid"

type fixture struct {
	meta map[string]string
	snap [2]snapshotDir
}

type snapshotDir struct {
	dir  string
	at   time.Duration // capture time relative to t0
	rt   roots
	cgrp string // cgroup root of this snapshot
}

func loadFixture(t *testing.T) fixture {
	t.Helper()
	f := fixture{meta: readMeta(t, filepath.Join(fixtureDir, "meta.env"))}
	var t0 float64
	for i, name := range []string{"t0", "t1"} {
		dir := filepath.Join(fixtureDir, name)
		b, err := os.ReadFile(filepath.Join(dir, "time"))
		if err != nil {
			t.Fatal(err)
		}
		sec, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			t0 = sec
		}
		sys := filepath.Join(t.TempDir(), "sys")
		untar(t, filepath.Join(dir, "sys.tar"), sys)
		f.snap[i] = snapshotDir{
			dir:  dir,
			at:   time.Duration((sec - t0) * float64(time.Second)),
			rt:   roots{proc: filepath.Join(dir, "proc"), sys: sys},
			cgrp: filepath.Join(dir, "cgroup"),
		}
	}
	return f
}

func (f fixture) ref(v cgroup.Version) cgroup.Ref {
	return cgroup.On(v, f.meta["CGROUP_PATH"])
}

func (f fixture) pid(t *testing.T) int {
	pid, err := strconv.Atoi(f.meta["PID"])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func readMeta(t *testing.T, name string) map[string]string {
	t.Helper()
	fh, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
	}
	return m
}

func untar(t *testing.T, archive, dst string) {
	t.Helper()
	fh, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	tr := tar.NewReader(fh)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, p)
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, b, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// withCgroupRoot points cgroup.Root at dir for the test. Tests using it must not be parallel.
func withCgroupRoot(t *testing.T, dir string) {
	t.Helper()
	old := cgroup.Root
	cgroup.Root = dir
	t.Cleanup(func() { cgroup.Root = old })
}

// collectPair reads both snapshots with collectors built by mk (called with cgroup.Root set
// to the snapshot's tree) and derives samples at t1.
func collectPair(t *testing.T, f fixture, cgroupSub string, mk func(s snapshotDir) collector) (reading, []Sample) {
	t.Helper()
	var rs [2]reading
	for i, s := range f.snap {
		withCgroupRoot(t, filepath.Join(s.cgrp, cgroupSub))
		c := mk(s)
		rs[i] = reading{}
		if err := c.collect(rs[i]); err != nil {
			t.Fatalf("%s: collect %s: %v", c.name(), s.dir, err)
		}
	}
	out := derive("x", rs[0], f.snap[0].at, rs[1], f.snap[1].at)
	checkDocumented(t, out)
	return rs[1], out
}

// byMetric indexes samples by "metric" or "metric{label}".
func byMetric(ss []Sample) map[string]float64 {
	m := map[string]float64{}
	for _, s := range ss {
		k := s.Metric
		if s.Label != "" {
			k += "{" + s.Label + "}"
		}
		m[k] = s.Value
	}
	return m
}

func checkDocumented(t *testing.T, ss []Sample) {
	t.Helper()
	known := map[string]bool{}
	for _, m := range Metrics {
		known[m.Name] = true
	}
	for _, s := range ss {
		if !known[s.Metric] {
			t.Errorf("metric %q is not listed in Metrics", s.Metric)
		}
	}
}

func between(t *testing.T, m map[string]float64, name string, lo, hi float64) {
	t.Helper()
	v, ok := m[name]
	if !ok {
		t.Errorf("%s absent", name)
		return
	}
	if v < lo || v > hi {
		t.Errorf("%s = %g, want in [%g, %g]", name, v, lo, hi)
	}
}

func absent(t *testing.T, m map[string]float64, names ...string) {
	t.Helper()
	for _, n := range names {
		if v, ok := m[n]; ok {
			t.Errorf("%s = %g, want absent", n, v)
		}
	}
}

func TestV1CollectorOnCapturedContainer(t *testing.T) {
	f := loadFixture(t)
	ref := f.ref(cgroup.V1)
	last, out := collectPair(t, f, "", func(s snapshotDir) collector {
		c, err := newV1Collector(ref, s.rt)
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
	m := byMetric(out)
	const mib = 1 << 20
	// The container spins two goroutines under a 0.5 CPU quota.
	between(t, m, "cpu_usage_seconds_per_second", 0.35, 0.65)
	between(t, m, "cpu_user_seconds_per_second", 0.2, 0.7)
	between(t, m, "cpu_periods_per_interval", 5, 40)
	between(t, m, "cpu_throttled_periods_per_interval", 5, 40)
	if m["cpu_throttled_periods_per_interval"] < 0.8*m["cpu_periods_per_interval"] {
		t.Errorf("throttled %g of %g periods; a container spinning over its quota is throttled in most",
			m["cpu_throttled_periods_per_interval"], m["cpu_periods_per_interval"])
	}
	between(t, m, "cpu_throttled_seconds_per_second", 0.1, 2)
	between(t, m, "memory_usage_bytes", 64*mib, 256*mib)
	between(t, m, "memory_rss_bytes", 64*mib, 256*mib)
	between(t, m, "memory_working_set_bytes", 64*mib, 256*mib)
	between(t, m, "memory_cache_bytes", 0, 64*mib)
	between(t, m, "memory_swap_bytes", 0, 0)
	between(t, m, "memory_oom_kills_per_interval", 0, 0)
	between(t, m, "memory_limit_hits_per_interval", 0, 0)
	between(t, m, "memory_major_faults_per_second", 0, 1000)
	// The 32 MiB written with fsync happened before t0; nothing in between.
	between(t, m, "io_write_bytes_per_second", 0, 0)
	if v := last[key{metric: "io_write_bytes_total"}]; v < 32*mib {
		t.Errorf("io_write_bytes_total = %g, want >= 32 MiB", v)
	}
	// PSI comes from the group's mirror in the unified mount; CPU-starved by its quota.
	between(t, m, "pressure_cpu_some_seconds_per_second", 0.3, 1)
	between(t, m, "pressure_memory_some_seconds_per_second", 0, 1)
	between(t, m, "pressure_io_full_seconds_per_second", 0, 1)
}

// TestV2CollectorOnCapturedUnifiedGroup reads the container's group in the hybrid host's
// unified mount: a real v2 group, but with no controllers enabled (they are bound to v1), so
// only cpu.stat's core keys and PSI exist. Everything else must be absent, not zero.
func TestV2CollectorOnCapturedUnifiedGroup(t *testing.T) {
	f := loadFixture(t)
	ref := f.ref(cgroup.V2)
	_, out := collectPair(t, f, "unified", func(s snapshotDir) collector {
		c, err := newV2Collector(ref)
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
	m := byMetric(out)
	between(t, m, "cpu_usage_seconds_per_second", 0.35, 0.65)
	between(t, m, "cpu_system_seconds_per_second", 0, 0.3)
	between(t, m, "pressure_cpu_some_seconds_per_second", 0.3, 1)
	absent(t, m, "cpu_periods_per_interval", "cpu_throttled_periods_per_interval", "cpu_throttled_seconds_per_second",
		"memory_usage_bytes", "memory_rss_bytes", "memory_working_set_bytes", "memory_swap_bytes",
		"memory_limit_hits_per_interval", "memory_oom_kills_per_interval", "io_read_bytes_per_second",
		"io_write_ops_per_second")
}

func TestReadLimitsOnCapturedContainer(t *testing.T) {
	f := loadFixture(t)
	withCgroupRoot(t, f.snap[0].cgrp)
	got, err := f.ref(cgroup.V1).ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	want := resource.Limits{CPUs: 0.5, Cpuset: "0-1", MemoryBytes: 256 << 20} // blkio.bfq.weight at its default: no weight
	if got != want {
		t.Errorf("v1 limits = %+v, want %+v", got, want)
	}
	withCgroupRoot(t, filepath.Join(f.snap[0].cgrp, "unified"))
	got, err = f.ref(cgroup.V2).ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	if got != (resource.Limits{}) {
		t.Errorf("v2 limits of a group without controllers = %+v, want none", got)
	}
	withCgroupRoot(t, f.snap[0].cgrp)
	if _, err := cgroup.On(cgroup.V1, "/no/such/group").ReadLimits(); err == nil {
		t.Error("ReadLimits of a missing v1 group: no error")
	}
}

func TestProcessCollectorOnCapturedProcess(t *testing.T) {
	f := loadFixture(t)
	_, out := collectPair(t, f, "", func(s snapshotDir) collector {
		c, err := newProcessCollector(f.pid(t), s.rt)
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
	m := byMetric(out)
	between(t, m, "cpu_user_seconds_per_second", 0.3, 0.7)
	between(t, m, "cpu_system_seconds_per_second", 0, 0.2)
	between(t, m, "context_switches_involuntary_per_second", 1, 1e5)
	between(t, m, "context_switches_voluntary_per_second", 0, 1e5)
	between(t, m, "memory_rss_bytes", 64<<20, 256<<20)
	between(t, m, "threads", 3, 100)
}

func TestHostCollectorsOnCapturedHost(t *testing.T) {
	f := loadFixture(t)
	var rs [2]reading
	for i, s := range f.snap {
		cs, err := newHostCollectors(s.rt)
		if err != nil {
			t.Fatal(err)
		}
		rs[i] = reading{}
		for _, c := range cs {
			if err := c.collect(rs[i]); err != nil {
				t.Fatalf("%s: %v", c.name(), err)
			}
		}
	}
	out := derive("host", rs[0], f.snap[0].at, rs[1], f.snap[1].at)
	checkDocumented(t, out)
	m := byMetric(out)
	between(t, m, "cpus", 2, 2)
	var sum float64
	for _, mode := range []string{"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"} {
		sum += m["cpu_"+mode+"_seconds_per_second"]
		between(t, m, "cpu_"+mode+"_seconds_per_second", 0, 2)
	}
	// All modes together are the CPUs; /proc/stat and the time stamp were read a little apart.
	if sum < 1.5 || sum > 2.5 {
		t.Errorf("CPU modes sum to %g cores, want about 2", sum)
	}
	between(t, m, "memory_total_bytes", 1<<30, 1<<40)
	between(t, m, "memory_used_bytes", 1<<20, m["memory_total_bytes"])
	between(t, m, "swap_used_bytes", 0, 0) // this host has no swap (SwapTotal 0)
	between(t, m, "swap_in_bytes_per_second", 0, 0)
	between(t, m, "load1", 0, 100)
	between(t, m, "pressure_cpu_some_seconds_per_second", 0, 1)
	between(t, m, "memory_major_faults_per_second", 0, 1e6)
}

func TestNetCollectorOnCapturedHost(t *testing.T) {
	f := loadFixture(t)
	for _, tc := range []struct {
		ifaces []string
		want   []string
		not    []string
	}{
		{nil, []string{"lo", "eth0", "docker0"}, nil},
		{[]string{"lo", "nosuch0"}, []string{"lo"}, []string{"eth0"}},
	} {
		var rs [2]reading
		for i, s := range f.snap {
			c, err := newNetCollector(tc.ifaces, s.rt, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			rs[i] = reading{}
			if err := c.collect(rs[i]); err != nil {
				t.Fatal(err)
			}
		}
		m := byMetric(derive("host", rs[0], f.snap[0].at, rs[1], f.snap[1].at))
		for _, i := range tc.want {
			between(t, m, "net_receive_bytes_per_second{"+i+"}", 0, 1e10)
			between(t, m, "net_transmit_packets_per_second{"+i+"}", 0, 1e8)
		}
		for _, i := range tc.not {
			absent(t, m, "net_receive_bytes_per_second{"+i+"}")
		}
	}
}

func TestDeviceOfCapturedMounts(t *testing.T) {
	f := loadFixture(t)
	s := f.snap[0]
	mounts, disks := readMountsAndDisks(t, s.rt)
	root := f.meta["ROOT_DEVICE"]
	for _, tc := range []struct {
		path, dev, backing string
		noDevice           bool
	}{
		{path: "/var/lib/docker/volumes", dev: root},
		{path: "/", dev: root},
		{path: f.meta["OVERLAY_MERGED"] + "/tmp", dev: root}, // overlay → upper dir
		{path: f.meta["LOOP_MOUNT"] + "/data", dev: f.meta["LOOP_DEVICE"], backing: root},
		{path: "/dev/shm", noDevice: true},
		{path: "/proc/1", noDevice: true},
	} {
		d, err := blockdev.Find(mounts, disks, s.rt.sys, tc.path)
		if tc.noDevice {
			if !errors.Is(err, blockdev.ErrNoBlockDevice) {
				t.Errorf("%s: got %v, %v; want ErrNoBlockDevice", tc.path, d, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if d.Name != tc.dev {
			t.Errorf("%s: device %s, want %s", tc.path, d.Name, tc.dev)
		}
		switch {
		case tc.backing == "" && d.Backing != nil:
			t.Errorf("%s: unexpected backing device %v", tc.path, d.Backing)
		case tc.backing != "" && (d.Backing == nil || d.Backing.Name != tc.backing):
			t.Errorf("%s: backing %v, want %s", tc.path, d.Backing, tc.backing)
		case tc.backing != "" && d.BackingFile != f.meta["LOOP_BACKING_FILE"]:
			t.Errorf("%s: backing file %q, want %q", tc.path, d.BackingFile, f.meta["LOOP_BACKING_FILE"])
		}
	}
}

func TestDiskCollectorOnCapturedLoopDevice(t *testing.T) {
	f := loadFixture(t)
	var rs [2]reading
	for i, s := range f.snap {
		mounts, disks := readMountsAndDisks(t, s.rt)
		dev, err := blockdev.Find(mounts, disks, s.rt.sys, f.meta["LOOP_MOUNT"])
		if err != nil {
			t.Fatal(err)
		}
		c, err := newDiskCollectorFor(dev, s.rt)
		if err != nil {
			t.Fatal(err)
		}
		rs[i] = reading{}
		if err := c.collect(rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	loop, root := f.meta["LOOP_DEVICE"], f.meta["ROOT_DEVICE"]
	// capture.sh wrote 8 MiB with O_DIRECT to the loop device before t0.
	if v := rs[1][key{"disk_write_bytes_total", loop}]; v < 8<<20 {
		t.Errorf("loop device write total %g, want >= 8 MiB", v)
	}
	out := derive("db", rs[0], f.snap[0].at, rs[1], f.snap[1].at)
	checkDocumented(t, out)
	m := byMetric(out)
	for _, p := range []string{"disk_", "disk_backing_"} {
		l := loop
		if p == "disk_backing_" {
			l = root
		}
		between(t, m, p+"read_bytes_per_second{"+l+"}", 0, 1e10)
		between(t, m, p+"write_ops_per_second{"+l+"}", 0, 1e7)
		between(t, m, p+"io_time_seconds_per_second{"+l+"}", 0, 1)
		between(t, m, p+"flush_ops_per_second{"+l+"}", 0, 1e6)
	}
}

func readMountsAndDisks(t *testing.T, rt roots) ([]*procfs.MountInfo, []blockdevice.Diskstats) {
	t.Helper()
	mounts, disks, err := blockdev.ReadTables(rt.proc, rt.sys)
	if err != nil {
		t.Fatal(err)
	}
	return mounts, disks
}

// TestSwapWithoutSwapDevice: on v1, swap is memsw minus memory usage, two reads a moment apart.
// On a host without a swap device that difference is noise and the collector reports a measured
// zero; with a swap device it reports the difference.
func TestSwapWithoutSwapDevice(t *testing.T) {
	f := loadFixture(t)
	for _, tc := range []struct {
		swapTotal string
		want      float64
	}{{"0 kB", 0}, {"1048576 kB", 256 << 10}} {
		dir := t.TempDir()
		if out, err := exec.Command("cp", "-a", filepath.Join(fixtureDir, "t0")+"/.", dir).CombinedOutput(); err != nil {
			t.Fatalf("copy fixture: %v %s", err, out)
		}
		memDir := filepath.Join(dir, "cgroup", "memory", f.meta["CGROUP_PATH"])
		usage, err := os.ReadFile(filepath.Join(memDir, "memory.usage_in_bytes"))
		if err != nil {
			t.Fatal(err)
		}
		u, _ := strconv.ParseInt(strings.TrimSpace(string(usage)), 10, 64)
		write := func(path, s string) {
			if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(filepath.Join(memDir, "memory.memsw.usage_in_bytes"), strconv.FormatInt(u+256<<10, 10)+"\n")
		mi, _ := os.ReadFile(filepath.Join(dir, "proc", "meminfo"))
		write(filepath.Join(dir, "proc", "meminfo"), strings.Replace(string(mi), "SwapTotal:             0 kB", "SwapTotal:       "+tc.swapTotal, 1))
		withCgroupRoot(t, filepath.Join(dir, "cgroup"))
		c, err := newV1Collector(f.ref(cgroup.V1), roots{proc: filepath.Join(dir, "proc"), sys: filepath.Join(dir, "sys")})
		if err != nil {
			t.Fatal(err)
		}
		r := reading{}
		if err := c.collect(r); err != nil {
			t.Fatal(err)
		}
		if got := r[key{metric: "memory_swap_bytes"}]; got != tc.want {
			t.Errorf("SwapTotal %s: memory_swap_bytes = %v, want %v", tc.swapTotal, got, tc.want)
		}
	}
}
