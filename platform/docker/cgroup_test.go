package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types"

	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestKillStrayOnlyItsGroup: a removed container's leftovers are the processes in the control
// group the engine made for it, and only those. An operator's `tail -F` of a file whose name
// holds the container's id (its log) survives, as does a process whose argv holds the id as an
// argument; a process the test put into the container's group (/docker/<id>, where runsc
// leaves its gofer and sandbox) is killed. Through Remove, as the teardown and doctor --cleanup
// call it, with a container id the engine does not know, when dockerd runs.
func TestKillStrayOnlyItsGroup(t *testing.T) {
	testenv.NeedRoot(t)
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	id := hex.EncodeToString(raw[:])
	dir := t.TempDir()
	group := filepath.Join(cgroup.Root, "memory", "docker", id)
	if cgroup.HostVersion() == cgroup.V2 {
		group = filepath.Join(cgroup.Root, "docker", id)
	}
	madeParent := false
	if _, err := os.Stat(filepath.Dir(group)); errors.Is(err, os.ErrNotExist) {
		madeParent = true
	}
	if err := os.MkdirAll(group, 0o755); err != nil {
		t.Skipf("cannot make a container's group here: %v", err)
	}
	t.Cleanup(func() {
		// Registered before the processes start, so it runs after they are killed and reaped.
		_ = cgroup.At("/docker/" + id).Remove()
		if madeParent {
			_ = os.Remove(filepath.Dir(group))
		}
	})
	operator := start(t, "tail", "-F", "/dev/null", filepath.Join(dir, id+"-json.log"))
	named := start(t, "sh", "-c", "sleep 300", "sh", id)
	inGroup := start(t, "sleep", "300")
	if err := os.WriteFile(filepath.Join(group, "cgroup.procs"), []byte(strconv.Itoa(inGroup.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}

	var killed []int
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if engine, err := image.Connect(); err == nil && pings(ctx, engine) {
		defer engine.Close()
		if err := New(engine, testLog(t)).Remove(ctx, id); err != nil {
			t.Fatalf("Remove of an unknown container: %v", err)
		}
	} else {
		var err error
		if killed, err = killStray(id); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(killed, inGroup.Process.Pid) {
			t.Errorf("killed %v: the process in the container's group (%d) is not among them", killed, inGroup.Process.Pid)
		}
	}
	for name, c := range map[string]*exec.Cmd{"tail -F of the container's log": operator, "a process with the id in its argv": named} {
		if syscall.Kill(c.Process.Pid, 0) != nil {
			t.Errorf("%s (pid %d) was killed: a process is never matched by its command line", name, c.Process.Pid)
		}
	}
	if !gone(inGroup.Process.Pid) {
		t.Errorf("the process in the removed container's group (pid %d) still runs", inGroup.Process.Pid)
	}
}

// pings says whether the engine answers within 10 s.
func pings(ctx context.Context, engine interface {
	Ping(context.Context) (types.Ping, error)
}) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := engine.Ping(ctx)
	return err == nil
}

// start starts argv, ends it with the test and reaps it.
func start(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(argv[0], argv[1:]...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	t.Cleanup(func() { _ = c.Process.Kill(); <-done })
	return c
}

// gone says whether pid has exited (reaped or a zombie), waiting up to 30 s.
func gone(pid int) bool {
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || len(b) > 0 && slices.Contains([]string{"Z", "X"}, stateOf(string(b))) {
			return true
		}
	}
	return false
}

// stateOf is the state field of a /proc/PID/stat line (after the command in parentheses).
func stateOf(stat string) string {
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' && i+2 < len(stat) {
			return stat[i+2 : i+3]
		}
	}
	return ""
}
