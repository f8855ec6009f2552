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

	"github.com/boxbench/boxbench/internal/testenv"
)

// fullSpec: two native Redis runs whose data set (300 000 records of 200 bytes, ~100 MiB of
// append-only file) does not fit the 64 MiB work root.
const fullSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-fault-full
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 2, duration: 2s, warmup: 1s}
dataset: {records: 300000, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 512MiB}
matrix:
  platform: [native]
repetitions: 2
order: sequential
`

// TestFaultWorkRootFull: a work root on a 64 MiB tmpfs that the data set does not fit. Both
// runs fail with a reason naming the full disk and the work root (the first loading the seed,
// the second from the same failed load, without loading again); the experiment ends with exit
// status 1 and its results stored; nothing is left on the filesystem but the locks and the
// seed cache's lock file (no partial seed), and nothing is mounted under it.
func TestFaultWorkRootFull(t *testing.T) {
	testenv.NeedRoot(t)
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
		if b, err := exec.Command("umount", e.work).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", e.work, err, b)
		}
	})
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	if err := os.WriteFile(e.specFile, []byte(fullSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(e.dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := e.boxbench(ctx, "run", e.specFile, "--out", out).CombinedOutput()
	exp = experimentOf(e.work, "full")
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
	seeds, _ := os.ReadDir(filepath.Join(e.work, "seeds"))
	for _, s := range seeds {
		if !strings.HasSuffix(s.Name(), ".lock") {
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
