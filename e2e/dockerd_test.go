package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// ownDockerd is a dockerd of the test's own: its own data root, exec root, pid file and unix
// socket, its own bridge and no iptables rules, so that restarting it touches nothing of the
// host's dockerd or network. Only its own process (and the containerd it manages) is ever
// stopped, by pid.
//
// Never --bridge=none: dockerd 20.10 then deletes any interface named docker0 — the host
// engine's default bridge. The test makes a bridge of its own (on TEST-NET-2, 198.51.100.0/24,
// which no host routes) and names it with --bridge.
type ownDockerd struct {
	dir, data, sock, bridge string
	argv                    []string
	cmd                     *exec.Cmd
	log                     *os.File
}

// startOwnDockerd starts the test's dockerd and waits until it answers.
func startOwnDockerd(t *testing.T) *ownDockerd {
	t.Helper()
	testenv.NeedCommands(t, "dockerd", "docker")
	// A short directory: the engine's and containerd's unix sockets live under it.
	dir, err := os.MkdirTemp("/tmp", "bbd-")
	if err != nil {
		t.Fatal(err)
	}
	// overlay2 needs a real filesystem, not the tmpfs /tmp may be.
	data, err := os.MkdirTemp("/var/tmp", "boxbench-e2e-dockerd-")
	if err != nil {
		t.Fatal(err)
	}
	d := &ownDockerd{dir: dir, data: data, sock: filepath.Join(dir, "docker.sock"),
		bridge: "bbd" + strings.TrimPrefix(filepath.Base(dir), "bbd-")}
	if len(d.bridge) > 15 { // IFNAMSIZ
		d.bridge = d.bridge[:15]
	}
	hadDocker0 := hasLink("docker0")
	if routes, _ := exec.Command("ip", "-o", "-4", "addr", "show").Output(); bytes.Contains(routes, []byte(" 198.51.100.")) {
		testenv.Skip(t, "198.51.100.0/24 is in use on this host: no room for the test dockerd's bridge")
	}
	for _, argv := range [][]string{{"link", "add", d.bridge, "type", "bridge"},
		{"addr", "add", "198.51.100.1/24", "dev", d.bridge}, {"link", "set", d.bridge, "up"}} {
		if b, err := exec.Command("ip", argv...).CombinedOutput(); err != nil {
			_ = exec.Command("ip", "link", "del", d.bridge).Run()
			t.Fatalf("ip %s: %v: %s", strings.Join(argv, " "), err, b)
		}
	}
	d.argv = []string{"--data-root", data, "--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "docker.pid"), "-H", "unix://" + d.sock,
		"--bridge=" + d.bridge, "--iptables=false", "--ip-masq=false", "--ip-forward=false"}
	if d.log, err = os.Create(filepath.Join(dir, "dockerd.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.stop(t)
		d.log.Close()
		if b, err := exec.Command("ip", "link", "del", d.bridge).CombinedOutput(); err != nil {
			t.Errorf("remove the test dockerd's bridge %s: %v: %s", d.bridge, err, b)
		}
		if hadDocker0 && !hasLink("docker0") {
			t.Errorf("the host's docker0 is gone")
		}
		// dockerd leaves its default network namespace bind-mounted under its exec root: ours
		// to unmount. Under the data root nothing may stay mounted (a container's layer would
		// mean a container outlived the engine).
		mounts, _ := os.ReadFile("/proc/self/mounts")
		for _, m := range storage.ParseMounts(bytes.NewReader(mounts)) {
			if strings.HasPrefix(m.Target, dir+"/") {
				if b, err := exec.Command("umount", m.Target).CombinedOutput(); err != nil {
					t.Errorf("umount %s: %v: %s", m.Target, err, b)
				}
			}
			if strings.HasPrefix(m.Target, data+"/") {
				t.Errorf("left mounted under the test dockerd's data root: %s", m.Target)
				return
			}
		}
		_ = os.RemoveAll(data)
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	d.start(t)
	return d
}

// start runs dockerd and waits (at most a minute) until it answers on its socket.
func (d *ownDockerd) start(t *testing.T) {
	t.Helper()
	d.cmd = exec.Command("dockerd", d.argv...)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := exec.CommandContext(ctx, "docker", "-H", "unix://"+d.sock, "info").Run()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(d.log.Name())
			t.Fatalf("the test's dockerd does not answer: %v\n%s", err, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop ends the test's dockerd with SIGTERM (it stops its containers and its containerd) and
// waits for it; after a minute it is killed, with its process group.
func (d *ownDockerd) stop(t *testing.T) {
	t.Helper()
	if d.cmd == nil || d.cmd.Process == nil {
		return
	}
	pid := d.cmd.Process.Pid
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Errorf("the test's dockerd %d ignored SIGTERM for a minute: killing its group", pid)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
	d.cmd = nil
}

// TestFaultDockerdRestart restarts the engine (a dockerd of the test's own, never the host's)
// while the first of two Redis runs in Docker boxes (host network: nothing of the test's
// dockerd's bridge is measured) measures. Restarted at once: that run fails with its reason
// (the server's log of its shutdown by the engine), the second is ok, and nothing is left in
// the engine (containers, volumes, networks) or on the host. Down until boxbench has ended:
// both runs fail (the second cannot provision), the first run's teardown could not reach the
// engine; once the engine is back, `doctor --cleanup` removes the container it kept. The two
// run one after the other: their dockerds' bridges use the same TEST-NET subnet.
func TestFaultDockerdRestart(t *testing.T) {
	parallel(t)
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "redis-server")
	for _, down := range []bool{false, true} {
		name := "restart"
		if down {
			name = "down"
		}
		t.Run(name, func(t *testing.T) { dockerdRestart(t, down) })
	}
}

func dockerdRestart(t *testing.T, down bool) {
	d := startOwnDockerd(t)
	e := newEnv(t, spec{Name: "fault-dockerd", Order: "sequential", Limits: "{cpus: 1, memory: 256MiB}",
		Workload: "{type: ycsb, mix: read-heavy, threads: 2, duration: 8s, warmup: 1s}",
		Matrix:   "  platform: [docker]\n  storage: [bind]\n  network: [host]"})
	e.dockerHost = "unix://" + d.sock // boxbench and the docker CLI of the checks
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// The image, imported into the test's engine from the cached root filesystem.
	if b, err := e.boxbench(ctx, "images", "build", "--dbms", "redis").CombinedOutput(); err != nil {
		t.Fatalf("images build into the test's dockerd: %v\n%s", err, b)
	}
	r := e.start(ctx, t)
	r.waitFor(t, 3*time.Minute, "the first run never measured", func() bool {
		return r.experiment() != "" && strings.Contains(r.log.String(), "warmup+measure") && e.dockerContainers(r.exp, "r0001", true) > 0
	})
	time.Sleep(2 * time.Second) // into the measured window
	d.stop(t)
	if !down {
		d.start(t)
	}
	r.wantExit(t, 1)
	if down {
		d.start(t)
		if e.dockerContainers(r.exp, "r0001", true) > 0 {
			t.Logf("the engine kept run 1's container while it was down, as expected")
		}
		b, err := e.boxbench(ctx, "doctor", "--cleanup").CombinedOutput()
		if err != nil {
			t.Fatalf("doctor --cleanup: %v\n%s", err, b)
		}
		t.Logf("doctor --cleanup once the engine is back:\n%s", b)
	}
	res, text := e.results(ctx, t, r.out)
	want2 := "ok"
	if down {
		want2 = "failed"
	}
	checkRuns(t, res, text, "failed:stopped answering", want2)
	if len(res.Runs) != 2 {
		return
	}
	t.Logf("run 1: %s", res.Runs[0].Reason)
	if down {
		t.Logf("run 2: %s", res.Runs[1].Reason)
	} else if !strings.Contains(res.Runs[0].Reason, "Received SIGTERM") {
		t.Errorf("run 1's reason does not carry the server's log of its shutdown by the engine:\n%s", res.Runs[0].Reason)
	}
	if all, err := e.docker("ps", "-aq").Output(); err != nil || len(bytes.TrimSpace(all)) > 0 {
		t.Errorf("containers left in the test's engine: %v %s", err, all)
	}
}

// hasLink reports whether a network interface of that name exists.
func hasLink(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}
