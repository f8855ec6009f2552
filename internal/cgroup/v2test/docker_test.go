package v2test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
)

// dockerdFlags are the guest's dockerd flags, as the VM image's boxbench-dockerd gives them (no
// bridge and no iptables: the bed's containers use the guest's network namespace).
var dockerdFlags = []string{"--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-forward=false", "--ip-masq=false"}

// TestDockerOnV2 runs boxbench's docker platform against the guest's dockerd, first with the
// systemd cgroup driver (the guest has no systemd: the test proves what dockerd does then), then
// with the cgroupfs driver, where Redis is provisioned with every limit and weight and each one
// is read from the kernel's files of the container's group.
func TestDockerOnV2(t *testing.T) {
	inGuest(t)
	t.Run("systemd", testSystemdDriver)
	t.Run("cgroupfs", testCgroupfsDriver)
}

// testCgroupfsDriver: dockerd as the VM platform's guests start it (cgroupfs, the default without
// systemd), Redis in a container with every limit and weight; each is asserted in the kernel's
// files of the group /proc/<pid>/cgroup names, in boxbench's read-back and in its telemetry; after
// teardown nothing boxbench created remains under /sys/fs/cgroup.
func testCgroupfsDriver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if out, err := command.Run(ctx, "boxbench-dockerd"); err != nil {
		t.Fatalf("start dockerd: %v %s", err, out)
	}
	t.Logf("V2BED dockerd (cgroupfs) answered after %s", time.Since(start).Round(100*time.Millisecond))
	p := connect(ctx, t, "cgroupfs")
	before := groups(t)
	var d dbms.DBMS = redis.Redis{}
	b, err := p.Provision(ctx, request(t, d))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Teardown(context.Background())
	f := b.Facts()
	t.Logf("V2BED docker box: engine %s, cgroup %s, image %s, runtime %s", f["engine"], f["cgroup"], f["image"], f["runtime"])
	ref := b.Observe().Cgroup
	if ref == nil {
		t.Fatal("the box has no cgroup")
	}
	// The group the platform observes is the server's own, as the kernel names it.
	var pid int
	if _, err := fmt.Sscan(f["server_pid"], &pid); err != nil {
		t.Fatalf("server pid %q: %v", f["server_pid"], err)
	}
	if got := procCgroup(t, pid); got != ref.Path() {
		t.Errorf("/proc/%d/cgroup names %q, the box observes %q", pid, got, ref.Path())
	}
	for _, dir := range []string{cgroup.Root, filepath.Dir(ref.Dir(""))} {
		t.Logf("V2BED %s/cgroup.subtree_control: %s", dir, fileOr(dir, "cgroup.subtree_control"))
	}
	checkBox(ctx, t, b)
	if err := b.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ref.Dir("")); !os.IsNotExist(err) {
		t.Errorf("the container's group %s remains after teardown (%v)", ref.Dir(""), err)
	}
	// The engine's cgroup parent (/docker, made at the first container start) is the engine's
	// and stays, empty; any other group the box added is a leftover.
	parent := filepath.Dir(ref.Dir(""))
	if after := groups(t); !slices.Equal(before, slices.DeleteFunc(after, func(g string) bool { return g == parent && !slices.Contains(before, g) })) {
		t.Errorf("groups before the box %v, after its teardown %v (the engine's parent %s may stay)", before, after, parent)
	}
	if _, err := os.Stat(filepath.Join(cgroup.Root, "boxbench")); !os.IsNotExist(err) {
		t.Errorf("/sys/fs/cgroup/boxbench exists after a docker box (%v)", err)
	}
}

// testSystemdDriver starts dockerd with --exec-opt native.cgroupdriver=systemd in a guest without
// systemd and provisions the same box through boxbench. Either step may fail, and then must fail
// for want of systemd (the failure is logged as V2BED-SYSTEMD for the docs); if both succeed, the
// box is checked like the cgroupfs one. dockerd is stopped at the end either way.
func testSystemdDriver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	log := "/run/v2bed-dockerd-systemd.log"
	lf, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	cmd := exec.Command("dockerd", append(slices.Clone(dockerdFlags), "--exec-opt", "native.cgroupdriver=systemd")...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer stopDockerd(t, cmd, exited)

	up := false
	for !up {
		select {
		case err := <-exited:
			exited <- err // for stopDockerd
			tail := logTail(log)
			t.Logf("V2BED-SYSTEMD dockerd exited at start (%v): %s", err, tail)
			wantSystemdCause(t, tail)
			return
		case <-ctx.Done():
			t.Fatalf("dockerd with the systemd driver neither answered nor exited: %s", logTail(log))
		case <-time.After(200 * time.Millisecond):
			up = exec.CommandContext(ctx, "docker", "info").Run() == nil
		}
	}
	p := connect(ctx, t, "systemd")
	var d dbms.DBMS = redis.Redis{}
	b, err := p.Provision(ctx, request(t, d))
	if err != nil {
		t.Logf("V2BED-SYSTEMD dockerd runs with the systemd driver, a container cannot start: %v", err)
		wantSystemdCause(t, err.Error())
		return
	}
	defer b.Teardown(context.Background())
	t.Logf("V2BED-SYSTEMD a container started with the systemd driver: checking it")
	checkBox(ctx, t, b)
	if err := b.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
}

// wantSystemdCause fails unless msg blames the missing systemd (its D-Bus socket), so any other
// failure of the systemd driver is not mistaken for the known one.
func wantSystemdCause(t *testing.T, msg string) {
	t.Helper()
	m := strings.ToLower(msg)
	if !strings.Contains(m, "systemd") && !strings.Contains(m, "dbus") {
		t.Errorf("the systemd driver failed, but not for want of systemd: %s", msg)
	}
}

// stopDockerd sends dockerd SIGTERM (it stops its containerd) and waits; then kills its session.
func stopDockerd(t *testing.T, cmd *exec.Cmd, exited chan error) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Errorf("dockerd (pid %d) did not stop within 60 s of SIGTERM: killed", cmd.Process.Pid)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	// Its managed containerd is in dockerd's session; wait until it is gone too.
	for i := 0; i < 300 && exec.Command("pidof", "containerd").Run() == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
}

// connect opens the guest's dockerd at the default socket and checks that it runs the wanted
// cgroup driver on cgroup v2.
func connect(ctx context.Context, t *testing.T, driver string) *docker.Platform {
	t.Helper()
	engine, err := image.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	info, err := engine.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("V2BED dockerd %s: cgroup driver %s, cgroup v%s, storage %s, default runtime %s", info.ServerVersion,
		info.CgroupDriver, info.CgroupVersion, info.Driver, info.DefaultRuntime)
	if info.CgroupDriver != driver || info.CgroupVersion != "2" {
		t.Fatalf("dockerd reports cgroup driver %q on v%s, want %s on v2", info.CgroupDriver, info.CgroupVersion, driver)
	}
	return docker.New(engine, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

func request(t *testing.T, d dbms.DBMS) platform.Request {
	return platform.Request{Experiment: "v2bed", Run: "d1", WorkDir: filepath.Join(workDir(t), "d1"), DBMS: d,
		Choice: platform.Choice{Storage: storage.Bind, Network: docker.NetworkHost}, Resources: limits}
}

// procCgroup is the unified hierarchy's group of pid ("0::/path" in /proc/<pid>/cgroup).
func procCgroup(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			return p
		}
	}
	t.Fatalf("/proc/%d/cgroup has no unified entry: %q", pid, b)
	return ""
}

// groups lists every group under /sys/fs/cgroup.
func groups(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(cgroup.Root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if d.IsDir() && p != cgroup.Root {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func logTail(path string) string {
	b, _ := os.ReadFile(path)
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}
