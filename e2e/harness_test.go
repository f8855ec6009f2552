package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
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

	"github.com/boxbench/boxbench/testkit/testenv"
)

// The one harness of the package: env builds a test's work root and spec and, when the test
// ends, checks that nothing of its experiments is left (leftovers_test.go); running is a
// boxbench run in the background that a test waits on and crashes (crash: a signal, then
// doctor --cleanup after kill -9); resume completes an experiment afterwards.

// spec is a test's experiment: the fields a test leaves empty get the defaults of String.
type spec struct {
	Name     string // after "e2e-"; the tests' experiments all start with it
	DBMS     string // redis; "-" for none (a matrix over dbms)
	Topology string // the topology map, if any
	Workload string // the workload map; "-" for none (workloads: in Extra)
	Records  int    // the data set's records (4 fields of 50 bytes)
	Limits   string
	Matrix   string // the lines under matrix:, indented by two
	Reps     string // repetitions (2)
	Order    string // order (sequential: the fault tests act on run r0001)
	Extra    string // further top-level lines: baseline, neighbours, placement, timeouts …
}

// String renders the spec. quietStart is off unless Extra sets it: the tests run beside each
// other, so the host is never quiet, and waiting for it would only add its timeout to each run
// (runner.TestPlacementQuietStartAndSteadyStateOnARealRun tests it).
func (s spec) String() string {
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: boxbench/v1alpha1\nkind: Experiment\nname: e2e-%s\n", s.Name)
	if d := or(s.DBMS, "redis"); d != "-" {
		fmt.Fprintf(&b, "dbms: %s\n", d)
	}
	if s.Topology != "" {
		fmt.Fprintf(&b, "topology: %s\n", s.Topology)
	}
	if w := or(s.Workload, "{type: ycsb, mix: read-heavy, threads: 2, duration: 2s, warmup: 1s}"); w != "-" {
		fmt.Fprintf(&b, "workload: %s\n", w)
	}
	records := s.Records
	if records == 0 {
		records = 1000
	}
	fmt.Fprintf(&b, "dataset: {records: %d, fieldCount: 4, fieldLength: 50}\n", records)
	fmt.Fprintf(&b, "limits: %s\n", or(s.Limits, "{cpus: 1, memory: 512MiB}"))
	fmt.Fprintf(&b, "matrix:\n%s\n", strings.TrimRight(or(s.Matrix, "  platform: [native]"), "\n"))
	fmt.Fprintf(&b, "repetitions: %s\n", or(s.Reps, "2"))
	if s.Order != "" {
		fmt.Fprintf(&b, "order: %s\n", s.Order)
	}
	if !strings.Contains(s.Extra, "quietStart:") {
		b.WriteString("quietStart: {timeout: 0s}\n")
	}
	b.WriteString(s.Extra)
	return b.String()
}

// env is one test's place: a temporary directory (spec, --out), a work root of its own, and
// where its boxes live beyond the host (another engine, the local cluster).
type env struct {
	dir, work, specFile string
	// dockerHost is the engine boxbench and the checks use ("": the host's).
	dockerHost string
	// swarmHost is the manager engine of the swarm of several engines platform swarm uses
	// (BOXBENCH_SWARM_HOST; "": a single-node swarm on the host's engine).
	swarmHost string
	// kubeMulti: they use these instances of the multi-node local cluster (scripts/kube-multi.sh).
	kubeMulti []multiInstance
	// after runs once the leftover check is done (unmount what the test mounted).
	after []func()
}

// newEnv requires root, makes the test's env with s as its spec, and checks when the test ends
// that nothing of any experiment run in it is left (env.assertClean).
func newEnv(t *testing.T, s spec) *env {
	t.Helper()
	testenv.NeedRoot(t)
	e := &env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
	e.specFile = filepath.Join(e.dir, "spec.yaml")
	e.setSpec(t, s)
	t.Cleanup(func() {
		e.assertClean(t)
		for _, f := range e.after {
			f()
		}
	})
	return e
}

// setSpec replaces the env's spec.
func (e *env) setSpec(t *testing.T, s spec) {
	t.Helper()
	if err := os.WriteFile(e.specFile, []byte(s.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// boxbench is a command of the binary on the env's work root (and engine), in a process group
// of its own.
func (e *env) boxbench(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, append([]string{"--work-root", e.work}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if e.dockerHost != "" {
		cmd.Env = append(os.Environ(), "DOCKER_HOST="+e.dockerHost)
	}
	if e.swarmHost != "" {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, "BOXBENCH_SWARM_HOST="+e.swarmHost)
	}
	return cmd
}

// docker is a docker CLI command against the env's engine.
func (e *env) docker(args ...string) *exec.Cmd {
	if e.dockerHost != "" {
		args = append([]string{"-H", e.dockerHost}, args...)
	}
	return exec.Command("docker", args...)
}

// run runs the spec to completion into a fresh out directory (args are more flags of run) and
// returns that directory and the output.
func (e *env) run(ctx context.Context, t *testing.T, args ...string) (string, []byte) {
	t.Helper()
	out := filepath.Join(e.dir, "out")
	b, err := e.boxbench(ctx, append([]string{"run", e.specFile, "--out", out}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	return out, b
}

// runStored runs the spec to completion (runs) and reads its results, which must hold n runs.
func (e *env) runStored(ctx context.Context, t *testing.T, n int) (string, storedResults, []byte) {
	t.Helper()
	out, _ := e.run(ctx, t)
	res, text := e.results(ctx, t, out)
	if len(res.Runs) != n {
		t.Fatalf("%d runs stored, want %d:\n%s", len(res.Runs), n, text)
	}
	return out, res, text
}

// resume runs the spec again into out with --resume, which must end with n runs stored, all ok.
func (e *env) resume(ctx context.Context, t *testing.T, out string, n int) []byte {
	t.Helper()
	b, err := e.boxbench(ctx, "run", e.specFile, "--out", out, "--resume").CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	res, text := e.results(ctx, t, out)
	want := make([]string, n)
	for i := range want {
		want[i] = "ok"
	}
	checkRuns(t, res, text, want...)
	return b
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
	ID         string            `json:"id"`
	Status     string            `json:"status"`
	Reason     string            `json:"reason"`
	Throughput *float64          `json:"throughput_ops_per_second"`
	Env        map[string]string `json:"env"`
	Facts      map[string]string `json:"facts"`
	Result     struct {
		Metrics map[string]float64 `json:"metrics"`
	} `json:"result"`
	Warnings []struct {
		Code string `json:"code"`
	} `json:"warnings"`
}

// results reads the stored results of out, decoded and as printed.
func (e *env) results(ctx context.Context, t *testing.T, out string) (storedResults, []byte) {
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

// checkRuns: the stored runs are, in order, as want says: "ok", or "failed:<part of the reason>".
func checkRuns(t *testing.T, res storedResults, text []byte, want ...string) {
	t.Helper()
	ok := len(res.Runs) == len(want)
	for i := 0; ok && i < len(want); i++ {
		status, reason, _ := strings.Cut(want[i], ":")
		ok = res.Runs[i].Status == status && strings.Contains(res.Runs[i].Reason, reason)
	}
	if !ok {
		t.Errorf("stored runs are not %q:\n%s", want, text)
	}
}

// report is `boxbench report` of out in format ("" for the table).
func (e *env) report(ctx context.Context, t *testing.T, out, format string) []byte {
	t.Helper()
	args := []string{"report", out}
	if format != "" {
		args = append(args, "--format", format)
	}
	b, err := e.boxbench(ctx, args...).Output()
	if err != nil {
		t.Fatalf("report %s: %v\n%s", format, err, b)
	}
	return b
}

// experiments are the ids of the experiments run under the env's work root (their locks).
func (e *env) experiments() []string {
	m, _ := filepath.Glob(filepath.Join(e.work, "locks", "e2e-*.lock"))
	var ids []string
	for _, l := range m {
		ids = append(ids, strings.TrimSuffix(filepath.Base(l), ".lock"))
	}
	return ids
}

// running is a boxbench run in the background, its output collected.
type running struct {
	e   *env
	cmd *exec.Cmd
	log *syncBuffer
	out string
	exp string
	// onKilled, when set, is called after kill -9 and before doctor --cleanup (crash).
	onKilled func()
	// seen: seeLive has found the experiment's leftovers (crash need not look again).
	seen bool
}

// start starts `boxbench run` of the env's spec into its out directory.
func (e *env) start(ctx context.Context, t *testing.T) *running {
	t.Helper()
	r := &running{e: e, out: filepath.Join(e.dir, "out"), log: &syncBuffer{}}
	r.cmd = e.boxbench(ctx, "run", e.specFile, "--out", r.out)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return r
}

// experiment is the run's experiment id once its lock exists under the work root ("" before).
func (r *running) experiment() string {
	if r.exp == "" {
		if ids := r.e.experiments(); len(ids) > 0 {
			r.exp = ids[len(ids)-1]
		}
	}
	return r.exp
}

// waitFor polls cond (every 10 ms: a teardown's window is short) until it holds; after limit
// it kills boxbench and fails with what and the log.
func (r *running) waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			_ = r.cmd.Process.Kill()
			_ = r.cmd.Wait()
			t.Fatalf("%s:\n%s", what, r.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// inPhase reports whether the log's last phase line is phase's ("load", "provision",
// "warmup+measure", "teardown").
func (r *running) inPhase(phase string) bool {
	return strings.Contains(lastPhase(r.log.String()), "msg="+phase+" ")
}

// lastPhase is the last phase line of a log.
func lastPhase(log string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		for _, p := range []string{"msg=load ", "msg=provision ", "msg=warmup+measure ", "msg=teardown "} {
			if strings.Contains(lines[i], p) {
				return lines[i]
			}
		}
	}
	return ""
}

// wantExit waits for boxbench, which must exit with code.
func (r *running) wantExit(t *testing.T, code int) {
	t.Helper()
	err := r.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != code {
		t.Fatalf("exit %v, want %d:\n%s", err, code, r.log.String())
	}
}

// seeLive requires the leftover check to see r's experiment, so that the check after the
// crash could fail.
func (r *running) seeLive(t *testing.T) {
	t.Helper()
	if r.experiment() == "" || len(r.e.leftovers(r.exp)) == 0 {
		t.Fatalf("the leftover check sees nothing of the experiment %q: it could not fail", r.exp)
	}
	r.seen = true
}

// crash sends sig to boxbench itself (not its group) and waits for it. After kill -9 nothing
// could tear down: `doctor --cleanup` must find the experiment crashed (its lock free) and
// report what it removed; its output is returned. After another signal boxbench tears down
// itself and exits 130, saying which signal it received.
func (r *running) crash(ctx context.Context, t *testing.T, sig syscall.Signal) []byte {
	t.Helper()
	if sig != syscall.SIGKILL && !r.seen {
		r.seeLive(t)
	}
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if sig != syscall.SIGKILL {
		r.wantExit(t, 130)
		if !strings.Contains(r.log.String(), "received "+sig.String()) {
			t.Errorf("no word of the signal in the log:\n%s", r.log.String())
		}
		return nil
	}
	err := r.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("exit %v, want killed:\n%s", err, r.log.String())
	}
	// Checked after the kill, not before: the check takes seconds on a loaded host, and a
	// phase the test aimed at could end meanwhile. Nothing tears down a killed boxbench, so
	// what it left must be visible now.
	r.seeLive(t)
	if r.onKilled != nil {
		r.onKilled()
	}
	b, err := r.e.boxbench(ctx, "doctor", "--cleanup").CombinedOutput()
	if err != nil {
		t.Fatalf("doctor --cleanup: %v\n%s", err, b)
	}
	if !bytes.Contains(b, []byte("removed (")) {
		t.Errorf("doctor --cleanup removed nothing of the killed experiment:\n%s", b)
	}
	t.Logf("doctor --cleanup after kill -9:\n%s", b)
	return b
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

// runIDs are the runs stored in out's results file (read directly: the experiment may still
// be running).
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
