package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/boxbench/boxbench/workload"
)

// testBinary builds boxbench into the test's temporary directory (or uses BOXBENCH_BIN); the
// build cache makes every build after the first a link.
func testBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; -short")
	}
	if bin := os.Getenv("BOXBENCH_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "boxbench")
	build := exec.Command("go", "build", "-o", bin, "./cmd/boxbench")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// silentEngine is a container engine that accepts connections and never answers (a unix
// socket of the test's); each accepted connection is announced on the channel.
func silentEngine(t *testing.T) (dockerHost string, accepted <-chan struct{}) {
	t.Helper()
	sock, accepted := testenv.Silent(t, "unix")
	return "unix://" + sock, accepted
}

// smallResults writes an experiment of n ok runs over two cells with the results package.
func smallResults(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	st, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutCells([]results.CellRecord{
		{ID: "platform=native", Params: map[string]string{"platform": "native"}, BaselineID: "platform=native"},
		{ID: "platform=docker", Params: map[string]string{"platform": "docker"}, BaselineID: "platform=native"},
	}); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := 0; i < n; i++ {
		cell := []string{"platform=native", "platform=docker"}[i%2]
		rec := &results.RunRecord{ID: fmt.Sprintf("r%04d", i+1), CellID: cell, Rep: i/2 + 1, Seq: i + 1, Status: "ok",
			Started: start, Ended: start.Add(time.Minute),
			Result: &workload.Result{Mode: workload.ModeClosed, Threads: 1, Measured: 10 * time.Second,
				Ops: []workload.OpSummary{{Op: "read", Count: 1000, Throughput: 1000 + float64(i%7)}}}}
		if err := st.PutRun(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ran is what one run of the binary did.
type ran struct {
	code           int
	stdout, stderr string
}

// startBinary starts bin with args and extra environment; stdout goes to out (nil: captured).
func startBinary(t *testing.T, bin string, env []string, out io.Writer, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if out != nil {
		cmd.Stdout = out
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stdout, &stderr
}

// waitBinary waits at most bound for cmd, killing it (and failing the test) if it goes on.
func waitBinary(t *testing.T, cmd *exec.Cmd, stdout, stderr *bytes.Buffer, bound time.Duration) ran {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(bound):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not end within %s\nstderr: %s", cmd.Args, bound, stderr.String())
	}
	r := ran{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if s := r.stdout + r.stderr; strings.Contains(s, "goroutine ") || strings.Contains(s, "panic:") {
		t.Errorf("%v printed a stack trace:\n%s", cmd.Args[1:], s)
	}
	return r
}

const silentSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: silent
dbms: redis
dataset: {records: 1000}
workload: {type: ycsb, duration: 2s}
limits: {cpus: 1, memory: 1GiB}
repetitions: 1
matrix: {platform: [docker], network: [host, bridge-published]}
`

// TestSilentEngine: with DOCKER_HOST at an engine that accepts and never answers, plan,
// doctor, doctor --cleanup, report, compare and results each end (well within 60 s), with the
// engine named as not answering where they ask it, and no stack trace.
func TestSilentEngine(t *testing.T) {
	bin := testBinary(t)
	host, accepted := silentEngine(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "silent.yaml")
	if err := os.WriteFile(spec, []byte(silentSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	res := smallResults(t, 8)
	work := filepath.Join(dir, "work")
	noAnswer := "container engine at DOCKER_HOST=" + host + " did not answer within 10 s"
	for _, tc := range []struct {
		args []string
		code int
		want string // "" for a command that never asks the engine
	}{
		{[]string{"plan", spec}, ExitUsage, "matrix: no cell of the matrix can run on this host: " + noAnswer},
		{[]string{"doctor"}, ExitOK, noAnswer},
		{[]string{"doctor", "--cleanup"}, ExitFailure, "container engine at DOCKER_HOST=" + host + " did not answer within 30 s"}, // it lists first
		{[]string{"report", res}, ExitOK, ""},
		{[]string{"compare", res, res}, ExitOK, ""},
		{[]string{"results", res}, ExitOK, ""},
	} {
		t.Run(strings.Join(tc.args[:1], " "), func(t *testing.T) {
			for len(accepted) > 0 {
				<-accepted
			}
			cmd, stdout, stderr := startBinary(t, bin, []string{"DOCKER_HOST=" + host}, nil,
				append([]string{"--work-root", work}, tc.args...)...)
			r := waitBinary(t, cmd, stdout, stderr, 60*time.Second)
			if r.code != tc.code {
				t.Errorf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", tc.args, r.code, tc.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Errorf("%v: no %q in\nstdout: %s\nstderr: %s", tc.args, tc.want, r.stdout, r.stderr)
			}
			if tc.want == "" && len(accepted) > 0 {
				t.Errorf("%v asked the engine: a reading command must not", tc.args)
			}
		})
	}
}

// TestSignalWhileBlocked: SIGINT and SIGTERM to a reading command that is blocked — plan and
// doctor on a silent engine (sent once the engine has accepted boxbench's connection), report
// and results on a stdout nobody reads — end it at once with 130 and a message that says what
// was going on, never a teardown of a run there is none of.
func TestSignalWhileBlocked(t *testing.T) {
	bin := testBinary(t)
	host, accepted := silentEngine(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "silent.yaml")
	if err := os.WriteFile(spec, []byte(silentSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	res := smallResults(t, 2000) // its CSV is far larger than a pipe holds
	work := filepath.Join(dir, "work")
	for _, tc := range []struct {
		args   []string
		engine bool // blocked on the engine; otherwise on stdout
		want   []string
	}{
		{[]string{"plan", spec}, true, []string{"while planning: stopped; nothing had been started"}},
		{[]string{"doctor"}, true, []string{"while checking the host: stopping once", "interrupted: doctor stopped before its checks were done"}},
		{[]string{"doctor", "--cleanup"}, true, []string{"while cleaning up: stopping once the current removal is done", "interrupted: cleanup stopped after 0 removal(s)"}},
		{[]string{"report", "--format", "csv", res}, false, []string{"while reading the results: stopped; nothing had been started"}},
		{[]string{"results", "--format", "csv", res}, false, []string{"while reading the results: stopped; nothing had been started"}},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(strings.Join(tc.args[:1], " ")+"/"+sig.String(), func(t *testing.T) {
				for len(accepted) > 0 {
					<-accepted
				}
				var out *os.File
				var pr *os.File
				if !tc.engine {
					var err error
					if pr, out, err = os.Pipe(); err != nil {
						t.Fatal(err)
					}
					defer pr.Close()
				}
				var w io.Writer
				if out != nil {
					w = out
				}
				cmd, stdout, stderr := startBinary(t, bin, []string{"DOCKER_HOST=" + host}, w,
					append([]string{"--work-root", work}, tc.args...)...)
				if out != nil {
					out.Close() // the child holds its own copy
				}
				if tc.engine {
					select {
					case <-accepted:
					case <-time.After(60 * time.Second):
						cmd.Process.Kill()
						t.Fatalf("%v never asked the engine", tc.args)
					}
				} else if _, err := pr.Read(make([]byte, 1)); err != nil { // writing: it fills the pipe and blocks
					t.Fatal(err)
				}
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				r := waitBinary(t, cmd, stdout, stderr, 30*time.Second)
				if r.code != ExitInterrupted {
					t.Errorf("%v: exit %d after %v, want %d\nstderr: %s", tc.args, r.code, sig, ExitInterrupted, r.stderr)
				}
				for _, want := range tc.want {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("%v: no %q in stderr:\n%s", tc.args, want, r.stderr)
					}
				}
				if strings.Contains(r.stderr, "tearing down") || strings.Contains(r.stderr, "--resume") {
					t.Errorf("%v: a teardown announced where no run was started:\n%s", tc.args, r.stderr)
				}
			})
		}
	}
}
