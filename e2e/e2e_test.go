// Package e2e runs the real boxbench binary against real databases: the end-to-end tier.
package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/boxbench/boxbench/internal/testenv"
	"github.com/boxbench/boxbench/storage"
)

var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	bin = os.Getenv("BOXBENCH_BIN")
	if bin == "" && !testing.Short() {
		dir, err := os.MkdirTemp("", "boxbench-e2e-bin-")
		if err != nil {
			panic(err)
		}
		bin = filepath.Join(dir, "boxbench")
		out, err := exec.Command("go", "build", "-o", bin, "../cmd/boxbench").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build boxbench: %v\n%s", err, out)
			os.Exit(1)
		}
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

const nativeSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-%s
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 2, duration: %s, warmup: 1s}
dataset: {records: 2000, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 512MiB}
matrix:
  platform: [native]
  storage: [bind, tmpfs, overlay]
repetitions: %d
baseline: {platform: native, storage: bind}
storageOptions: {tmpfs: {size: 256MiB}}
placement: {client: "0", clientPolicy: idle}
`

type env struct {
	dir, work, specFile string
}

func setup(t *testing.T, name, duration string, reps int) env {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "redis-server")
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	if err := os.WriteFile(e.specFile, []byte(fmt.Sprintf(nativeSpec, name, duration, reps)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { assertNoLeftovers(t, e.work) })
	return e
}

// runSpec writes text as the spec, runs it to completion into a fresh out directory and
// returns that directory.
func (e env) runSpec(ctx context.Context, t *testing.T, text string) string {
	t.Helper()
	if err := os.WriteFile(e.specFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(e.dir, "out")
	if b, err := e.boxbench(ctx, "run", e.specFile, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	return out
}

// storedResults is what `results --format json` says of an experiment, as far as the tests read it.
type storedResults struct {
	Runs    []storedRun `json:"runs"`
	Skipped []struct {
		ID     string `json:"id"`
		Reason string `json:"skipped_reason"`
	} `json:"skipped_cells"`
}

// storedRun is one run of storedResults.
type storedRun struct {
	ID, Status, Reason string
	Throughput         *float64          `json:"throughput_ops_per_second"`
	Env                map[string]string `json:"env"`
	Facts              map[string]string `json:"facts"`
}

// results reads the stored results of out, decoded and as printed.
func (e env) results(ctx context.Context, t *testing.T, out string) (storedResults, []byte) {
	t.Helper()
	b, err := e.boxbench(ctx, "results", out, "--format", "json").Output()
	if err != nil {
		t.Fatalf("results: %v", err)
	}
	var got storedResults
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	return got, b
}

func (e env) boxbench(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, append([]string{"--work-root", e.work}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// TestRunAndResults: a fresh experiment stores ok runs for the supported cells and lists the
// unsupported one as skipped with its reason.
func TestRunAndResults(t *testing.T) {
	e := setup(t, "basic", "1s", 2)
	out := filepath.Join(e.dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// -q: no progress output at all (it once crashed the run with a nil progress sink).
	if b, err := e.boxbench(ctx, "-q", "run", e.specFile, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	got, b := e.results(ctx, t, out)
	if len(got.Runs) != 4 {
		t.Fatalf("%d runs stored, want 4 (2 cells × 2): %s", len(got.Runs), b)
	}
	for _, r := range got.Runs {
		if r.Status != "ok" || r.Throughput == nil || *r.Throughput <= 0 {
			t.Errorf("run %s: status %s throughput %v", r.ID, r.Status, r.Throughput)
		}
		if r.Env["client_cpus"] != "0" || r.Env["client_policy"] != "idle" || r.Env["kernel"] == "" ||
			r.Env["dbms_version"] == "" || r.Env["wakeup_same_cpu_cpu_ns"] == "" {
			t.Errorf("run %s environment: client_cpus %q client_policy %q kernel %q dbms_version %q wakeup_same_cpu_cpu_ns %q",
				r.ID, r.Env["client_cpus"], r.Env["client_policy"], r.Env["kernel"], r.Env["dbms_version"], r.Env["wakeup_same_cpu_cpu_ns"])
		}
	}
	if len(got.Skipped) != 1 || !strings.Contains(got.Skipped[0].Reason, "no container layer") {
		t.Errorf("skipped cells: %+v", got.Skipped)
	}
	table, err := e.boxbench(ctx, "results", out).Output()
	if err != nil || !bytes.Contains(table, []byte("skipped")) || !bytes.Contains(table, []byte("ops/s")) {
		t.Errorf("results table: %v\n%s", err, table)
	}
	series, err := e.boxbench(ctx, "results", out, "--run", got.Runs[0].ID, "--series").Output()
	if err != nil || !bytes.Contains(series, []byte("db.cpu_usage_seconds_per_second")) ||
		!bytes.Contains(series, []byte("client.sched_wait_seconds_per_second")) {
		t.Errorf("series: %v\n%s", err, series)
	}
	if err := e.boxbench(ctx, "run", e.specFile, "--out", out).Run(); err == nil {
		t.Error("a second run into the same --out must refuse without --resume")
	}
}

// TestResumeAfterKill kills boxbench with SIGKILL in the middle of an experiment, then resumes:
// every planned run is stored exactly once, and nothing is left behind.
func TestResumeAfterKill(t *testing.T) {
	e := setup(t, "resume", "2s", 3)
	out := filepath.Join(e.dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd, log := e.start(ctx, t, out)
	// Wait until two runs are stored and the third is measuring (its server is up in its
	// cgroup), then kill -9: the server is orphaned, and resume must remove it.
	waitFor(t, cmd, log, 4*time.Minute, "the third run never started measuring", func() bool {
		return storedRuns(t, out) >= 2 && strings.Count(log.String(), "warmup+measure") >= 3
	})
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	before := storedRuns(t, out)

	b, err := e.boxbench(ctx, "run", e.specFile, "--out", out, "--resume").CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	rows := runIDs(t, out)
	if len(rows) != 6 {
		t.Fatalf("after resume %d runs stored (before: %d), want 6: %v", len(rows), before, rows)
	}
	seen := map[string]bool{}
	for _, id := range rows {
		if seen[id] {
			t.Errorf("run %s stored twice", id)
		}
		seen[id] = true
	}
	if !strings.Contains(string(b), "removed leftover") {
		t.Errorf("resume did not report removing the killed run's leftovers (before: %d runs stored):\n%s", before, b)
	}
}

// TestInterrupt: SIGINT stops the current run cleanly, stores nothing partial, exits non-zero.
func TestInterrupt(t *testing.T) {
	e := setup(t, "sigint", "20s", 1)
	out := filepath.Join(e.dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, log := e.start(ctx, t, out)
	waitFor(t, cmd, log, 3*time.Minute, "never reached measurement", func() bool {
		return strings.Contains(log.String(), "warmup+measure")
	})
	time.Sleep(2 * time.Second)
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130:\n%s", err, log.String())
	}
	if n := storedRuns(t, out); n != 0 {
		t.Errorf("%d runs stored after an interrupt during the first run", n)
	}
}

// start starts `boxbench run` of the spec into out in the background, its output collected.
func (e env) start(ctx context.Context, t *testing.T, out string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := e.boxbench(ctx, "run", e.specFile, "--out", out)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, log
}

// waitFor polls cond until it holds; after limit it kills cmd and fails with what and the log.
func waitFor(t *testing.T, cmd *exec.Cmd, log *syncBuffer, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("%s:\n%s", what, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// syncBuffer collects a child's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func storedRuns(t *testing.T, out string) int { return len(runIDs(t, out)) }

func runIDs(t *testing.T, out string) []string {
	t.Helper()
	path := filepath.Join(out, "results.db")
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id FROM runs`)
	if err != nil {
		return nil // schema not created yet
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		ids = append(ids, id)
	}
	return ids
}

// assertNoLeftovers: no boxbench cgroup with processes, no mount or loop device under the work
// root, no labelled container.
func assertNoLeftovers(t *testing.T, work string) {
	t.Helper()
	assertNoLeftoversOf(t, work, "e2e-")
}

// assertNoLeftoversOf is assertNoLeftovers for the experiments whose names start with prefix.
func assertNoLeftoversOf(t *testing.T, work, prefix string) {
	t.Helper()
	mounts, _ := os.ReadFile("/proc/self/mounts")
	for _, m := range storage.ParseMounts(bytes.NewReader(mounts)) {
		if strings.HasPrefix(m.Target, work) {
			t.Errorf("left mounted: %s", m.Target)
		}
	}
	if out, err := exec.Command("losetup", "--list", "--noheadings", "--output", "BACK-FILE").Output(); err == nil && strings.Contains(string(out), work) {
		t.Errorf("loop device left: %s", out)
	}
	_ = filepath.Walk("/sys/fs/cgroup/memory/boxbench", func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == "cgroup.procs" {
			if b, _ := os.ReadFile(p); len(bytes.TrimSpace(b)) > 0 && strings.Contains(p, "/"+prefix) {
				t.Errorf("processes left in %s: %s", filepath.Dir(p), b)
			}
		}
		return nil
	})
	// Only this package's experiments (other packages' tests may run at the same time).
	out, err := exec.Command("docker", "ps", "-a", "--filter", "label=boxbench", "--format", `{{.ID}} {{.Label "boxbench.experiment"}}`).Output()
	if err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(f[1], prefix) {
				t.Errorf("labelled container left: %s", line)
			}
		}
	}
}

const neighbourSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-neighbours
dbms: postgresql
workload: {type: ycsb, mix: write-heavy, threads: 2, duration: 2s, warmup: 1s}
dataset: {records: 1000, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 512MiB, ioWeight: 70, cpuWeight: 70}
neighbours:
  fsync-high: {workload: {type: fio, job: fsync-high, size: 32MiB}, limits: {ioWeight: 30, cpuWeight: 30}}
  cpu-hog: {workload: {type: stress, cpu: 1}, limits: {cpus: 0.5}}
matrix:
  platform: [native]
  neighbour: [none, fsync-high, cpu-hog]
repetitions: 1
baseline: {neighbour: none}
`

// TestNeighbours runs a database beside an fio and a stress-ng neighbour: the runs store the
// neighbours' own throughput and the configured and obtained shares, and the neighbours' boxes
// are gone afterwards.
func TestNeighbours(t *testing.T) {
	testenv.NeedRoot(t)
	testenv.NeedCommands(t, "postgres", "fio", "stress-ng")
	e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	t.Cleanup(func() { assertNoLeftovers(t, e.work) })
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	out := e.runSpec(ctx, t, neighbourSpec)
	b, err := e.boxbench(ctx, "report", out, "--format", "json").Output()
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	var rep struct {
		Cells []struct {
			ID      string
			Metrics map[string]struct{ Mean float64 } `json:"metrics"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, c := range rep.Cells {
		m := c.Metrics
		switch {
		case strings.Contains(c.ID, "neighbour=fsync-high"):
			found++
			if m["io_share_configured_ratio"].Mean != 0.7 || m["neighbour_fsync-high_write_iops"].Mean <= 0 {
				t.Errorf("fsync-high cell metrics: %v", m)
			}
			if v, ok := m["io_share_obtained_ratio"]; ok && (v.Mean < 0 || v.Mean > 1) {
				t.Errorf("obtained io share %v out of [0,1]", v.Mean)
			}
		case strings.Contains(c.ID, "neighbour=cpu-hog"):
			found++
			if m["neighbour_cpu-hog_cpu_bogo_ops_per_second"].Mean <= 0 || m["cpu_share_configured_ratio"].Mean != 0.7/(0.7+1.0) {
				t.Errorf("cpu-hog cell metrics: %v", m)
			}
			if v := m["cpu_share_obtained_ratio"]; v.Mean <= 0 || v.Mean >= 1 {
				t.Errorf("obtained cpu share %v, want in (0,1)", v.Mean)
			}
		}
	}
	if found != 2 {
		t.Errorf("neighbour cells in the report: %d, want 2:\n%s", found, b)
	}
}

// TestAdaptiveRepetitions: with a target no noisy host can meet — a CI half-width, or an effect
// each comparison must be able to detect — every cell (for the effect: the candidate and its
// baseline) gets runs added up to max, each decision is recorded, and the report shows them.
func TestAdaptiveRepetitions(t *testing.T) {
	for _, target := range []string{"targetCIHalfWidth: 0.001%", "targetEffect: 0.001%"} {
		t.Run(strings.Fields(target)[0], func(t *testing.T) {
			e := setup(t, "adaptive", "1s", 1)
			spec := strings.NewReplacer("repetitions: 1", "repetitions: {min: 2, max: 3, "+target+"}",
				"storage: [bind, tmpfs, overlay]", "storage: [bind, tmpfs]").Replace(fmt.Sprintf(nativeSpec, "adaptive", "1s", 1))
			if err := os.WriteFile(e.specFile, []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(e.dir, "out")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			b, err := e.boxbench(ctx, "run", e.specFile, "--out", out).CombinedOutput()
			if err != nil {
				t.Fatalf("run: %v\n%s", err, b)
			}
			if n := storedRuns(t, out); n != 6 {
				t.Errorf("%d runs, want 2 cells × 3 (min 2, one adaptive round)", n)
			}
			if !bytes.Contains(b, []byte("adaptive repetitions:")) || !bytes.Contains(b, []byte("run 3 added")) {
				t.Errorf("the report does not show the adaptive decisions:\n%s", b)
			}
		})
	}
}

// TestClientPolicyPerCell: with clientPolicy in the matrix, each run's workload runs under the
// policy its cell gives the client (client_policy is read back from the kernel meanwhile).
func TestClientPolicyPerCell(t *testing.T) {
	e := setup(t, "policy", "1s", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := e.runSpec(ctx, t, strings.NewReplacer("  storage: [bind, tmpfs, overlay]\n", "  storage: [bind]\n  clientPolicy: [normal, idle]\n",
		`placement: {client: "0", clientPolicy: idle}`, `placement: {client: "0"}`).Replace(fmt.Sprintf(nativeSpec, "policy", "1s", 1)))
	got, _ := e.results(ctx, t, out)
	policies := map[string]string{}
	for _, r := range got.Runs {
		if r.Status != "ok" {
			t.Errorf("run %s: %s", r.ID, r.Status)
		}
		policies[r.ID] = r.Env["client_policy"]
	}
	want := map[string]string{"platform=native/storage=bind/clientPolicy=normal#1": "normal",
		"platform=native/storage=bind/clientPolicy=idle#1": "idle"}
	if fmt.Sprint(policies) != fmt.Sprint(want) {
		t.Errorf("client_policy per run %v, want %v", policies, want)
	}
}
