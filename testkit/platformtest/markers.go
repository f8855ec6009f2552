package platformtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// Canaries are things a hostile marker names that boxbench did not create: each must be left as
// it is by the cleanup of the marker's crashed experiment.
type Canaries struct {
	Dir   string // a directory holding a file, outside every boxbench tree
	Group string // a control group outside /boxbench holding a process
	Link  string // a host bridge whose name is not one boxbench makes
}

// MarkerCase is one platform's marker for HostileMarkers.
type MarkerCase struct {
	File    string // the marker's file name in a box's work directory
	Cleanup func(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error)
	// Valid is the marker the box at at writes (without a bridge: the control removes it).
	Valid func(at platform.Place) any
	// Hostile are markers that must be refused (with an error naming the marker): each names
	// something of c, or something not derived from at.
	Hostile map[string]func(at platform.Place, c Canaries) any
}

// HostileMarkers plants markers in the run directory of a crashed experiment under a temporary
// work root, beside the box's own group (/boxbench/<exp>/<run>, holding a process of the
// test's), and runs the platform's cleanup. A hostile marker — mc.Hostile's, or the valid one as
// a link, a FIFO, a huge file, a group-writable file, another user's, with an unknown field, in
// a run directory that is a link, or naming another experiment — must not be acted on: the
// process and every canary survive. The control, the valid marker, must be acted on: the
// process is killed (so the cases above can fail).
func HostileMarkers(t *testing.T, mc MarkerCase) {
	testenv.NeedRoot(t)
	c := newCanaries(t)
	valid := func(at platform.Place) []byte { return mustJSON(t, mc.Valid(at)) }
	files := map[string]func(t *testing.T, at platform.Place, path string) bool{
		"link": func(t *testing.T, at platform.Place, path string) bool {
			target := filepath.Join(t.TempDir(), mc.File)
			write(t, target, valid(at), 0o644)
			return os.Symlink(target, path) == nil
		},
		"fifo": func(t *testing.T, _ platform.Place, path string) bool { return syscall.Mkfifo(path, 0o644) == nil },
		"huge": func(t *testing.T, at platform.Place, path string) bool {
			return write(t, path, append(valid(at), bytes.Repeat([]byte(" "), 1<<20)...), 0o644)
		},
		"group-writable": func(t *testing.T, at platform.Place, path string) bool {
			return write(t, path, valid(at), 0o644) && os.Chmod(path, 0o664) == nil
		},
		"another user's": func(t *testing.T, at platform.Place, path string) bool {
			return write(t, path, valid(at), 0o644) && os.Chown(path, 65534, 65534) == nil
		},
		"unknown field": func(t *testing.T, at platform.Place, path string) bool {
			b := valid(at)
			return write(t, path, append(b[:len(b)-1], []byte(`,"remove":"/"}`)...), 0o644)
		},
	}
	for name, f := range files {
		t.Run(name, func(t *testing.T) {
			plant(t, mc, c, true, func(at platform.Place, path string) bool { return f(t, at, path) })
		})
	}
	for name, f := range mc.Hostile {
		t.Run(name, func(t *testing.T) {
			plant(t, mc, c, true, func(at platform.Place, path string) bool { return write(t, path, mustJSON(t, f(at, c)), 0o644) })
		})
	}
	t.Run("another experiment's", func(t *testing.T) {
		plant(t, mc, c, false, func(at platform.Place, path string) bool {
			other := at
			other.Experiment = "other-" + at.Experiment
			return write(t, path, valid(other), 0o644)
		})
	})
	t.Run("run directory is a link", func(t *testing.T) {
		plant(t, mc, c, false, func(at platform.Place, path string) bool {
			real := t.TempDir()
			write(t, filepath.Join(real, mc.File), valid(at), 0o644)
			return os.RemoveAll(at.Dir()) == nil && os.Symlink(real, at.Dir()) == nil
		})
	})
	t.Run("control", func(t *testing.T) {
		at, proc := place(t)
		write(t, filepath.Join(at.Dir(), mc.File), valid(at), 0o644)
		gone, err := cleanup(t, mc, at)
		if err != nil || !exited(proc) {
			t.Errorf("the valid marker was not acted on: removed %v, error %v, the box's process still runs: %v", gone, err, !exited(proc))
		}
		c.check(t)
	})
}

// plant makes a crashed experiment's run directory, lets make put a marker into it, runs the
// cleanup and checks that nothing was acted on (and, with wantErr, that the error names the
// marker).
func plant(t *testing.T, mc MarkerCase, c Canaries, wantErr bool, make func(at platform.Place, path string) bool) {
	at, proc := place(t)
	path := filepath.Join(at.Dir(), mc.File)
	if !make(at, path) {
		t.Fatalf("could not plant the marker %s", path)
	}
	gone, err := cleanup(t, mc, at)
	if !alive(proc) {
		t.Errorf("the box's own process was killed: the hostile marker was acted on (removed %v)", gone)
	}
	if len(gone) > 0 {
		t.Errorf("removed %v through a hostile marker", gone)
	}
	if wantErr && (err == nil || !strings.Contains(err.Error(), mc.File)) {
		t.Errorf("cleanup's error %v does not name the refused marker %s", err, mc.File)
	}
	c.check(t)
}

func cleanup(t *testing.T, mc MarkerCase, at platform.Place) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gone, err := mc.Cleanup(ctx, at.WorkRoot, func(e string) bool { return e == at.Experiment })
	t.Logf("cleanup: removed %v, error: %v", gone, err)
	return gone, err
}

// place makes a crashed experiment's run directory under a new work root and the box's own
// group holding a process of the test's (removed with the test).
func place(t *testing.T) (platform.Place, *exec.Cmd) {
	t.Helper()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	at := platform.Place{WorkRoot: t.TempDir(), Experiment: fmt.Sprintf("hm-%d-%s", os.Getpid(), hex.EncodeToString(rnd[:])), Run: "r0001"}
	if err := os.MkdirAll(at.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	return at, inGroup(t, "/boxbench/"+at.Experiment+"/"+at.Run)
}

// inGroup makes the group path (its memory hierarchy on v1) and starts a process in it; both
// are removed with the test.
func inGroup(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	ref := cgroup.At(path)
	if err := os.MkdirAll(ref.Dir("memory"), 0o755); err != nil {
		t.Skipf("cannot make a group here: %v", err)
	}
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		for p := path; p != "/" && p != "/boxbench"; p = filepath.Dir(p) {
			_ = cgroup.At(p).Remove()
		}
	})
	write(t, filepath.Join(ref.Dir("memory"), "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	return cmd
}

// alive says whether proc runs now. A cleanup that acted on a group waited for it to empty
// (cgroup.Ref.Kill), so a process the cleanup killed is gone or a zombie by the time it returns.
func alive(proc *exec.Cmd) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(proc.Process.Pid) + "/stat")
	return err == nil && !bytes.Contains(b, []byte(") Z "))
}

// exited says whether proc has ended, waiting up to 5 s for a SIGKILL to land.
func exited(proc *exec.Cmd) bool {
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(proc.Process.Pid) + "/stat")
		if err != nil || bytes.Contains(b, []byte(") Z ")) {
			return true
		}
	}
	return false
}

func newCanaries(t *testing.T) Canaries {
	t.Helper()
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	c := Canaries{Dir: filepath.Join(t.TempDir(), "canary"), Group: "/bbcanary-" + hex.EncodeToString(rnd[:]),
		Link: "cnry" + hex.EncodeToString(rnd[:])}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(c.Dir, "keep"), []byte("keep"), 0o644)
	proc := inGroup(t, c.Group)
	t.Cleanup(func() {
		_ = proc.Process.Kill()
	})
	if out, err := exec.Command("ip", "link", "add", c.Link, "type", "bridge").CombinedOutput(); err != nil {
		t.Skipf("cannot make a bridge here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", c.Link).Run() })
	return c
}

// check fails the test when a canary is gone.
func (c Canaries) check(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(c.Dir, "keep")); err != nil {
		t.Errorf("the canary directory outside the work root: %v", err)
	}
	ref := cgroup.At(c.Group)
	if pids, err := ref.Pids(); err != nil || len(pids) == 0 {
		t.Errorf("the canary group %s: processes %v, %v", c.Group, pids, err)
	}
	if err := exec.Command("ip", "link", "show", c.Link).Run(); err != nil {
		t.Errorf("the canary interface %s: %v", c.Link, err)
	}
}

func mustJSON(t *testing.T, m any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t *testing.T, path string, b []byte, mode os.FileMode) bool {
	t.Helper()
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
	return true
}
