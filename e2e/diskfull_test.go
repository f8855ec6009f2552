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
