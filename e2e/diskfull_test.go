package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestFaultWorkRootFull: a work root on a 64 MiB tmpfs, two Redis runs with storage=bind (the
// data directory in the work root). On a native box the data set (~100 MiB, 300 000 records)
// does not fit the seed's load, or (~40 MiB) fits it but not the seed's copy beside it. On a
// Docker and an LXC box a first experiment loads a small data set and keeps its seed; the test
// then fills the filesystem to 2 MiB free, and a second experiment of the same spec, restoring
// that seed into each box, fails. Every failed run's reason names the full disk and the work
// root (natively the second from the same failed load, without loading again); the experiment
// ends with exit status 1 and its results stored; nothing is left on the filesystem but the
// locks, the seed cache's lock file and complete seeds (no partial one), and nothing is
// mounted under it.
func TestFaultWorkRootFull(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		box     box
		records int
		prefill bool
	}{
		{"native", "native", 300000, false},
		// ~40 MiB: the load fits, its copy into seeds/ does not (no partial seed may stay).
		{"native-capture", "native", 120000, false},
		{"docker", "docker", 20000, true},
		{"lxc", "lxc", 20000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			parallel(t)
			workRootFullOn(t, c.box, c.name, c.records, c.prefill)
		})
	}
}

func workRootFullOn(t *testing.T, b box, name string, records int, prefill bool) {
	b.need(t, "redis")
	testenv.NeedCommands(t, "redis-server", "mount", "umount")
	e := newEnv(t, spec{Name: "fault-full-" + name, Records: records, Order: "sequential",
		Matrix: "  platform: [" + string(b) + "]\n  storage: [bind]"})
	// The tmpfs is mounted on the test's work root (0755: the servers' users traverse it),
	// unmounted after the leftover check and before that directory is removed.
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "boxbench-e2e-full", e.work).CombinedOutput(); err != nil {
		testenv.Skip(t, fmt.Sprintf("mount a tmpfs: %v: %s", err, out))
	}
	e.after = append(e.after, func() {
		if out, err := exec.Command("umount", e.work).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", e.work, err, out)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var first string
	if prefill {
		// The seed is loaded and kept by a first experiment; then the disk is filled.
		if out, err := e.boxbench(ctx, "run", e.specFile, "--out", filepath.Join(e.dir, "first")).CombinedOutput(); err != nil {
			t.Fatalf("first experiment: %v\n%s", err, out)
		}
		first = e.experiments()[0]
		e.assertClean(t)
		var st unix.Statfs_t
		if err := unix.Statfs(e.work, &st); err != nil {
			t.Fatal(err)
		}
		free := int64(st.Bavail) * st.Bsize
		if free < 4<<20 {
			t.Fatalf("only %d bytes free after the first experiment", free)
		}
		f, err := os.Create(filepath.Join(e.work, "filler"))
		if err != nil {
			t.Fatal(err)
		}
		err = unix.Fallocate(int(f.Fd()), 0, 0, free-2<<20)
		f.Close()
		if err != nil {
			t.Fatalf("fill the work root: %v", err)
		}
		defer os.Remove(filepath.Join(e.work, "filler")) // before the leftover check
	}
	out := filepath.Join(e.dir, "out")
	text, err := e.boxbench(ctx, "run", e.specFile, "--out", out).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1 (runs failed):\n%s", err, text)
	}
	if n := len(e.experiments()); first != "" && n != 2 || n == 0 {
		t.Fatalf("%d experiment locks under %s:\n%s", n, e.work, text)
	}
	res, b1 := e.results(ctx, t, out)
	if len(res.Runs) != 2 {
		t.Fatalf("%d runs stored, want 2:\n%s", len(res.Runs), b1)
	}
	for _, r := range res.Runs {
		if r.Status != "failed" || !strings.Contains(r.Reason, "disk full") || !strings.Contains(r.Reason, "the work root "+e.work) {
			t.Errorf("run %s: %s %q, want failed naming the full work root", r.ID, r.Status, r.Reason)
		}
	}
	t.Logf("run 1: %s", res.Runs[0].Reason)
	seeds, _ := os.ReadDir(filepath.Join(e.work, "seeds"))
	for _, s := range seeds {
		n := filepath.Join(e.work, "seeds", s.Name())
		if !strings.HasSuffix(n, ".lock") && !strings.HasSuffix(n, ".complete") && !exists(n+".complete") {
			t.Errorf("a partial seed is left: seeds/%s", s.Name())
		}
	}
}

// TestFaultOutFull: --out on a 700 KiB tmpfs that holds the results of a run or two, not
// six. boxbench stops at the first run it cannot store, with exit status 1 and an error that
// says the disk is full and names the results file (no stack trace); the runs stored before
// are kept and readable, no partial report is left, nothing is left of the boxes; once the
// filesystem is grown, --resume completes the experiment.
func TestFaultOutFull(t *testing.T) {
	parallel(t)
	testenv.NeedCommands(t, "redis-server", "mount", "umount")
	e := newEnv(t, spec{Name: "fault-outfull", Reps: "6", Order: "sequential", Limits: "{cpus: 1, memory: 256MiB}"})
	out := filepath.Join(e.dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=700k,mode=0755", "boxbench-e2e-outfull", out).CombinedOutput(); err != nil {
		testenv.Skip(t, fmt.Sprintf("mount a tmpfs: %v: %s", err, b))
	}
	e.after = append(e.after, func() {
		if b, err := exec.Command("umount", out).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", out, err, b)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b, err := e.boxbench(ctx, "run", e.specFile, "--out", out).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1:\n%s", err, b)
	}
	results := filepath.Join(out, "results.db")
	if !strings.Contains(string(b), "error: ") || !strings.Contains(string(b), "disk full writing "+results) ||
		!strings.Contains(string(b), "--resume") {
		t.Errorf("the error does not say that the disk under %s is full:\n%s", results, b)
	}
	if strings.Contains(string(b), "goroutine ") || strings.Contains(string(b), "panic") {
		t.Errorf("a stack trace in the output:\n%s", b)
	}
	got, text := e.results(ctx, t, out)
	if len(got.Runs) == 0 || len(got.Runs) >= 6 {
		t.Errorf("%d runs kept, want some but not all 6 (the tmpfs holds a run or two):\n%s", len(got.Runs), text)
	}
	for _, r := range got.Runs {
		if r.Status != "ok" {
			t.Errorf("run %s kept as %s", r.ID, r.Status)
		}
	}
	ents, _ := os.ReadDir(out)
	for _, f := range ents {
		if n := f.Name(); !strings.HasPrefix(n, "results.db") && n != "boxbench-out.json" {
			t.Errorf("left in --out: %s", n)
		}
	}
	e.assertClean(t)

	if b, err := exec.Command("mount", "-o", "remount,size=16m", out).CombinedOutput(); err != nil {
		t.Fatalf("grow the tmpfs: %v: %s", err, b)
	}
	e.resume(ctx, t, out, 6)
}
