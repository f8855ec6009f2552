package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/testenv"
)

// fullSpec: two Redis runs on a platform, storage=bind (the data directory in the work root),
// of a data set of %d records (300 000 records of 200 bytes are ~100 MiB of append-only file).
const fullSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-fault-%s
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 2, duration: 2s, warmup: 1s}
dataset: {records: %d, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 512MiB}
matrix:
  platform: [%s]
  storage: [bind]
repetitions: 2
order: sequential
`

// TestFaultWorkRootFull: a work root on a 64 MiB tmpfs. On a native box the data set (~100 MiB)
// does not fit the seed's load, or (~40 MiB) fits it but not the seed's copy beside it. On a Docker and an LXC box (storage=bind) a first experiment
// loads a small data set and keeps its seed; the test then fills the filesystem to 2 MiB
// free, and a second experiment of the same spec, restoring that seed into each box, fails.
// Every failed run's reason names the full disk and the work root (natively the second from
// the same failed load, without loading again); the experiment ends with exit status 1 and its
// results stored; nothing is left on the filesystem but the locks, the seed cache's lock file
// and complete seeds (no partial one), and nothing is mounted under it.
func TestFaultWorkRootFull(t *testing.T) {
	for _, c := range []struct {
		name    string
		box     faultBox
		records int
		prefill bool
	}{
		{"native", nativeBox, 300000, false},
		// ~40 MiB: the load fits, its copy into seeds/ does not (no partial seed may stay).
		{"native-capture", nativeBox, 120000, false},
		{"docker", dockerBox, 20000, true},
		{"lxc", lxcBox, 20000, true},
	} {
		t.Run(c.name, func(t *testing.T) { workRootFullOn(t, c.box, c.records, c.prefill) })
	}
}

func workRootFullOn(t *testing.T, box faultBox, records int, prefill bool) {
	needBox(t, box, "redis")
	testenv.NeedCommands(t, "redis-server", "mount", "umount")
	// The tmpfs is mounted on a work root of its own (0755: the servers' users traverse it),
	// unmounted before that directory is removed.
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	if b, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "boxbench-e2e-full", e.work).CombinedOutput(); err != nil {
		testenv.Skip(t, fmt.Sprintf("mount a tmpfs: %v: %s", err, b))
	}
	var exp string
	t.Cleanup(func() {
		assertNoFaultLeftovers(t, e.work, exp)
		if exp != "" && box.leftovers != nil {
			box.leftovers(t, e.work, exp)
		}
		if b, err := exec.Command("umount", e.work).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", e.work, err, b)
		}
	})
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	name := "full-" + box.platform
	if err := os.WriteFile(e.specFile, []byte(fmt.Sprintf(fullSpec, name, records, box.platform)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(e.dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var first string
	if prefill {
		// The seed is loaded and kept by a first experiment; then the disk is filled.
		if b, err := e.boxbench(ctx, "run", e.specFile, "--out", out+"-first").CombinedOutput(); err != nil {
			t.Fatalf("first experiment: %v\n%s", err, b)
		}
		first = experimentOf(e.work, name)
		assertNoFaultLeftovers(t, e.work, first)
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
	b, err := e.boxbench(ctx, "run", e.specFile, "--out", out).CombinedOutput()
	m, _ := filepath.Glob(filepath.Join(e.work, "locks", "e2e-fault-"+name+"-*.lock"))
	for _, l := range m {
		if id := strings.TrimSuffix(filepath.Base(l), ".lock"); id != first {
			exp = id
		}
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1 (runs failed):\n%s", err, b)
	}
	if exp == "" {
		t.Fatalf("no experiment lock under %s:\n%s", e.work, b)
	}
	res, err := e.boxbench(ctx, "results", out, "--format", "json").Output()
	if err != nil {
		t.Fatalf("results: %v", err)
	}
	var got faultRuns
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != 2 {
		t.Fatalf("%d runs stored, want 2:\n%s", len(got.Runs), res)
	}
	for _, r := range got.Runs {
		if r.Status != "failed" || !strings.Contains(r.Reason, "disk full") || !strings.Contains(r.Reason, "the work root "+e.work) {
			t.Errorf("run %s: %s %q, want failed naming the full work root", r.ID, r.Status, r.Reason)
		}
	}
	t.Logf("run 1: %s", got.Runs[0].Reason)
	seeds, _ := os.ReadDir(filepath.Join(e.work, "seeds"))
	for _, s := range seeds {
		n := filepath.Join(e.work, "seeds", s.Name())
		if !strings.HasSuffix(n, ".lock") && !strings.HasSuffix(n, ".complete") && !exists(n+".complete") {
			t.Errorf("a partial seed is left: seeds/%s", s.Name())
		}
	}
}

// outFullSpec: six short native Redis runs; each stores a few hundred KiB of results.
const outFullSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-fault-outfull
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 2, duration: 2s, warmup: 1s}
dataset: {records: 1000, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 256MiB}
matrix:
  platform: [native]
repetitions: 6
order: sequential
`

// TestFaultOutFull: --out on a 700 KiB tmpfs that holds the results of a run or two, not
// six. boxbench stops at the first run it cannot store, with exit status 1 and an error that
// says the disk is full and names the results file (no stack trace); the runs stored before
// are kept and readable, no partial report is left, nothing is left of the boxes; once the
// filesystem is grown, --resume completes the experiment.
func TestFaultOutFull(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server", "mount", "umount")
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	out := filepath.Join(e.dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=700k,mode=0755", "boxbench-e2e-outfull", out).CombinedOutput(); err != nil {
		testenv.Skip(t, fmt.Sprintf("mount a tmpfs: %v: %s", err, b))
	}
	var exp string
	t.Cleanup(func() {
		assertNoFaultLeftovers(t, e.work, exp)
		if b, err := exec.Command("umount", out).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", out, err, b)
		}
	})
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	if err := os.WriteFile(e.specFile, []byte(outFullSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b, err := e.boxbench(ctx, "run", e.specFile, "--out", out).CombinedOutput()
	exp = experimentOf(e.work, "outfull")
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
		if n := f.Name(); !strings.HasPrefix(n, "results.db") {
			t.Errorf("left in --out: %s", n)
		}
	}
	assertNoFaultLeftovers(t, e.work, exp)

	if b, err := exec.Command("mount", "-o", "remount,size=16m", out).CombinedOutput(); err != nil {
		t.Fatalf("grow the tmpfs: %v: %s", err, b)
	}
	if b, err := e.boxbench(ctx, "run", e.specFile, "--out", out, "--resume").CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	got, text = e.results(ctx, t, out)
	if len(got.Runs) != 6 {
		t.Errorf("after resume %d runs, want 6:\n%s", len(got.Runs), text)
	}
	for _, r := range got.Runs {
		if r.Status != "ok" {
			t.Errorf("run %s %s after resume", r.ID, r.Status)
		}
	}
}
