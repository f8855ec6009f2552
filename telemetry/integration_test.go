package telemetry

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// Helper process: the test binary re-executed with helperEnv set spins instead of testing.
// With helperCgroupEnv set it first waits until it has been moved into a cgroup whose path
// contains that value, then writes and fsyncs 4 MiB into helperDirEnv, then spins.
const (
	helperEnv       = "BOXBENCH_TELEMETRY_HELPER"
	helperCgroupEnv = "BOXBENCH_TELEMETRY_HELPER_CGROUP"
	helperDirEnv    = "BOXBENCH_TELEMETRY_HELPER_DIR"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "spin" {
		helperMain()
	}
	os.Exit(m.Run())
}

func helperMain() {
	if want := os.Getenv(helperCgroupEnv); want != "" {
		for i := 0; ; i++ {
			b, _ := os.ReadFile("/proc/self/cgroup")
			if bytes.Contains(b, []byte(want)) {
				break
			}
			if i > 1000 {
				os.Exit(3)
			}
			time.Sleep(5 * time.Millisecond)
		}
		name := filepath.Join(os.Getenv(helperDirEnv), "helper.dat")
		if err := os.WriteFile(name, make([]byte, 4<<20), 0o600); err != nil {
			os.Exit(4)
		}
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if err != nil || f.Sync() != nil {
			os.Exit(5)
		}
		f.Close()
	}
	x := 0
	for {
		x++
	}
}

// need skips the test when a part of the host is missing, unless BOXBENCH_CI is set: in CI a
// missing part is a failure.
func need(t *testing.T, what string, ok bool) {
	t.Helper()
	if !ok {
		testenv.Skip(t, what+": not available")
	}
}

func unique() string { return fmt.Sprintf("telemetry-%d-%d", os.Getpid(), time.Now().UnixNano()) }

// startHelper starts a spinning helper process and kills it (by its PID) when the test ends.
func startHelper(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=spin"}, env...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// removeCgroupDir removes a cgroup directory, retrying while the kernel still counts a task
// that is exiting.
func removeCgroupDir(dir string) error {
	var err error
	for i := 0; i < 50; i++ {
		err = unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", dir, err)
}

func writeFile(t *testing.T, name, value string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(value), 0o644); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
}

// TestIntegrationV1CgroupThrottling creates a real v1 cgroup limited to 0.2 CPU, runs a busy
// process in it and checks that the sampler sees throttling, CPU use and the process's I/O.
func TestIntegrationV1CgroupThrottling(t *testing.T) {
	testenv.NeedRoot(t)
	need(t, "cgroup v1 controllers", cgroup.HostVersion() == cgroup.V1)
	name := unique()
	ref := cgroup.On(cgroup.V1, "/boxbench-test/"+name)
	for _, ctrl := range []string{"cpu", "cpuacct", "memory", "blkio"} {
		_, err := os.Stat(filepath.Join(cgroup.Root, ctrl))
		need(t, "cgroup v1 "+ctrl+" controller", err == nil)
	}
	for _, ctrl := range []string{"cpu", "cpuacct", "memory", "blkio"} {
		dir := ref.Dir(ctrl)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := removeCgroupDir(dir); err != nil {
				t.Error(err)
			}
		})
	}
	writeFile(t, filepath.Join(ref.Dir("cpu"), "cpu.cfs_period_us"), "100000")
	writeFile(t, filepath.Join(ref.Dir("cpu"), "cpu.cfs_quota_us"), "20000")
	writeFile(t, filepath.Join(ref.Dir("memory"), "memory.limit_in_bytes"), strconv.Itoa(256<<20))
	// A throttle rule far above any real rate activates blk-throttle on the disk's queue, the
	// condition for v1 I/O accounting (see v1Collector.io).
	dataDir := t.TempDir()
	var st unix.Stat_t
	if err := unix.Stat(dataDir, &st); err != nil {
		t.Fatal(err)
	}
	devRule := fmt.Sprintf("%d:%d %d", unix.Major(st.Dev), unix.Minor(st.Dev), uint64(1)<<40)
	if err := os.WriteFile(filepath.Join(ref.Dir("blkio"), "blkio.throttle.write_bps_device"), []byte(devRule), 0o644); err != nil {
		t.Logf("no blkio throttle rule for %s (%v): I/O may be absent", dataDir, err)
	}

	helper := startHelper(t, helperCgroupEnv+"="+name, helperDirEnv+"="+dataDir)
	clk := testClock()
	s, err := New([]Target{{Source: "db", Cgroup: &ref}}, time.Second, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap0, err := ReadSnapshot(ref, clk)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, ctrl := range []string{"cpu", "cpuacct", "memory", "blkio"} {
		writeFile(t, filepath.Join(ref.Dir(ctrl), "cgroup.procs"), strconv.Itoa(helper.Process.Pid))
	}
	time.Sleep(3 * time.Second)
	samples, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	snap1, err := ReadSnapshot(ref, clk)
	if err != nil {
		t.Fatal(err)
	}
	checkDocumented(t, samples)
	checkThrottled(t, samples, 0.2)

	var written float64
	for _, x := range sum(samples, "io_write_bytes_per_second") {
		written += x
	}
	if written == 0 {
		t.Error("the helper wrote 4 MiB with fsync but io_write_bytes_per_second is absent or 0")
	}
	d := snap1.Since(snap0)
	if d["cpu_throttled_periods_total"] <= 0 || d["cpu_usage_seconds_total"] <= 0 {
		t.Errorf("snapshot deltas %v: want throttled periods and CPU use", d)
	}
	lim, err := ref.ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	if lim.CPUs != 0.2 || lim.MemoryBytes != 256<<20 {
		t.Errorf("ReadLimits = %+v, want 0.2 cpus and 256 MiB", lim)
	}
}

// sum returns the values of one metric (all labels) in sample order.
func sum(ss []Sample, metric string) []float64 {
	var out []float64
	for _, s := range ss {
		if s.Metric == metric {
			out = append(out, s.Value)
		}
	}
	return out
}

// checkThrottled asserts that a group limited to quota cores and kept busy was throttled and
// used about its quota.
func checkThrottled(t *testing.T, samples []Sample, quota float64) {
	t.Helper()
	var throttled, periods float64
	for _, v := range sum(samples, "cpu_throttled_periods_per_interval") {
		throttled += v
	}
	for _, v := range sum(samples, "cpu_periods_per_interval") {
		periods += v
	}
	if throttled <= 0 || periods <= 0 {
		t.Errorf("throttled %g of %g periods; want > 0", throttled, periods)
	}
	// Rates over short intervals (the last one ends at Stop, maybe milliseconds after a tick)
	// swing around the quota because CFS enforces it per 100 ms period; the time-weighted mean
	// over the window must be near it.
	var cpuSeconds, window float64
	var prev time.Duration = -1
	for _, x := range samples {
		if x.Metric != "cpu_usage_seconds_per_second" {
			continue
		}
		if prev >= 0 {
			dt := (x.T - prev).Seconds()
			cpuSeconds += x.Value * dt
			window += dt
		}
		prev = x.T
	}
	if window < 1 {
		t.Fatalf("cpu usage covers %g s, want >= 1 s", window)
	}
	if mean := cpuSeconds / window; mean < quota/2 || mean > quota*1.5 {
		t.Errorf("mean cpu usage %g cores over %g s, want about the %g quota", mean, window, quota)
	}
}

// TestIntegrationDockerThrottling runs a busy loop in a real container with --cpus 0.2 (image
// built here from testdata/busy, no registry) and samples its cgroup.
func TestIntegrationDockerThrottling(t *testing.T) {
	testenv.NeedRoot(t)
	_, dockerErr := exec.LookPath("docker")
	need(t, "docker", dockerErr == nil)
	ctx := context.Background()
	_, err := command.Run(ctx, "docker", "info")
	need(t, "docker daemon", err == nil)
	goTool, err := exec.LookPath("go")
	need(t, "go toolchain (to build the test image)", err == nil)

	name := unique()
	image := "boxbench-test-busy:" + name
	rootfs := t.TempDir()
	build := exec.Command(goTool, "build", "-o", filepath.Join(rootfs, "busy"), "./testdata/busy")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build busy: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = command.Run(context.Background(), "docker", "rmi", "-f", image) })
	if _, err := command.RunWith(ctx, command.Options{Stdin: rootfsTar(t, rootfs)}, "docker", "import",
		"-c", "LABEL boxbench=test", "-c", `ENTRYPOINT ["/busy"]`, "-", image); err != nil {
		t.Fatal(err)
	}
	container := "boxbench-test-" + name
	t.Cleanup(func() { _, _ = command.Run(context.Background(), "docker", "rm", "-f", container) })
	if _, err := command.Run(ctx, "docker", "run", "-d", "--label", "boxbench=test", "--name", container,
		"--cpus", "0.2", image, "-spin", "2"); err != nil {
		t.Fatal(err)
	}
	out, err := command.Run(ctx, "docker", "inspect", "-f", "{{.State.Pid}}", container)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := cgroupOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("container cgroup %+v", ref)

	clk := testClock()
	s, err := New([]Target{{Source: "db", Cgroup: &ref}, {Source: "client", PID: os.Getpid()}, {Source: "host", Host: true}},
		time.Second, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	samples, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	var db []Sample
	for _, x := range samples {
		if x.Source == "db" {
			db = append(db, x)
		}
	}
	checkDocumented(t, samples)
	checkThrottled(t, db, 0.2)
	lim, err := ref.ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	if lim.CPUs != 0.2 {
		t.Errorf("ReadLimits = %+v, want 0.2 cpus", lim)
	}
}

// cgroupOf finds the cgroup of a process from /proc/<pid>/cgroup: the cpu controller's line on
// v1, the "0::" line on v2.
func cgroupOf(pid int) (cgroup.Ref, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return cgroup.Ref{}, err
	}
	defer f.Close()
	v := cgroup.HostVersion()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if v == cgroup.V2 && parts[0] == "0" && parts[1] == "" {
			return cgroup.On(v, parts[2]), nil
		}
		for _, c := range strings.Split(parts[1], ",") {
			if v == cgroup.V1 && c == "cpu" {
				return cgroup.On(v, parts[2]), nil
			}
		}
	}
	return cgroup.Ref{}, fmt.Errorf("no cpu cgroup for pid %d", pid)
}

// rootfsTar packs dir (the busy binary) plus an empty /tmp into a tar stream for docker import.
func rootfsTar(t *testing.T, dir string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	b, err := os.ReadFile(filepath.Join(dir, "busy"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []*tar.Header{
		{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777},
		{Name: "busy", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(b))},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// TestIntegrationV2Mount samples a group created in a real cgroup v2 mount, when the host has
// one (on a hybrid host: the unified mount, usually without controllers). It checks that each
// value is present exactly when the kernel offers its file or key.
func TestIntegrationV2Mount(t *testing.T) {
	testenv.NeedRoot(t)
	mount := v2Mount()
	need(t, "a cgroup v2 mount", mount != "")
	withCgroupRoot(t, mount)
	name := unique()
	ref := cgroup.On(cgroup.V2, "/boxbench-test/"+name)
	dir := ref.Dir("")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := removeCgroupDir(dir); err != nil {
			t.Error(err)
		}
	})
	helper := startHelper(t)
	clk := testClock()
	s, err := New([]Target{{Source: "db", Cgroup: &ref}}, 300*time.Millisecond, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "cgroup.procs"), strconv.Itoa(helper.Process.Pid))
	time.Sleep(time.Second)
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	samples, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	checkDocumented(t, samples)
	m := byMetric(samples)
	if u := sum(samples, "cpu_usage_seconds_per_second"); len(u) == 0 || maxOf(u) < 0.3 {
		t.Errorf("cpu usage %v: want a spinning process's share of a core", u)
	}
	cpuStat, _ := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	_, hasThrottle := m["cpu_throttled_periods_per_interval"]
	if want := bytes.Contains(cpuStat, []byte("nr_throttled")); hasThrottle != want {
		t.Errorf("throttling present=%v, but cpu.stat has nr_throttled=%v", hasThrottle, want)
	}
	for file, metric := range map[string]string{
		"memory.current": "memory_usage_bytes",
		"io.stat":        "io_read_bytes_per_second",
		"cpu.pressure":   "pressure_cpu_some_seconds_per_second",
	} {
		_, statErr := os.Stat(filepath.Join(dir, file))
		if _, ok := m[metric]; ok != (statErr == nil) {
			t.Errorf("%s present=%v, but %s exists=%v", metric, ok, file, statErr == nil)
		}
	}
	if _, err := ref.ReadLimits(); err != nil {
		t.Errorf("ReadLimits: %v", err)
	}
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// v2Mount returns the mount point of a cgroup2 file system, or "".
func v2Mount() string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		_, post, ok := strings.Cut(line, " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(line); len(f) > 4 {
			return f[4]
		}
	}
	return ""
}
