package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/testenv"
)

// signalSpec: two Redis runs on a platform; records sets how long the seed's load takes.
const signalSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: e2e-fault-%s
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 2, duration: 4s, warmup: 1s}
dataset: {records: %d, fieldCount: 4, fieldLength: 50}
limits: {cpus: 1, memory: 512MiB}
matrix:
  platform: [%s]
repetitions: 2
order: sequential
`

// TestSignalAtPhase sends SIGHUP or SIGQUIT (a dropped ssh session, Ctrl-\) while the first
// run loads its seed or while the second run measures: boxbench tears down and exits 130, the
// interrupted run is not stored (runs stored before it are), `--resume` completes the
// experiment (2 runs ok), and nothing is left. On native boxes, and during the measurement on
// Docker and LXC boxes.
func TestSignalAtPhase(t *testing.T) {
	for _, c := range []struct {
		name    string
		sig     syscall.Signal
		phase   string // the runner's phase log line ("msg=<phase>") to wait for
		nth     int    // signal during the nth occurrence of the phase
		records int
		stored  int // runs stored when the signal arrives
		box     faultBox
	}{
		{"hup-load", syscall.SIGHUP, "load", 1, 300000, 0, nativeBox},
		{"quit-load", syscall.SIGQUIT, "load", 1, 300000, 0, nativeBox},
		{"hup-measure", syscall.SIGHUP, "warmup+measure", 2, 1000, 1, nativeBox},
		{"quit-measure", syscall.SIGQUIT, "warmup+measure", 2, 1000, 1, nativeBox},
		{"term-measure-docker", syscall.SIGTERM, "warmup+measure", 2, 1000, 1, dockerBox},
		{"hup-measure-lxc", syscall.SIGHUP, "warmup+measure", 2, 1000, 1, lxcBox},
	} {
		t.Run(c.name, func(t *testing.T) {
			needBox(t, c.box, "redis")
			testenv.NeedCommands(t, "redis-server")
			e := env{dir: t.TempDir(), work: testenv.WorkRoot(t)}
			e.specFile = filepath.Join(e.dir, "spec.yaml")
			name := "sig-" + c.name
			if err := os.WriteFile(e.specFile, []byte(fmt.Sprintf(signalSpec, name, c.records, c.box.platform)), 0o644); err != nil {
				t.Fatal(err)
			}
			var exp string
			// Scoped to this experiment: other e2e experiments may run on the host meanwhile.
			t.Cleanup(func() {
				assertNoFaultLeftovers(t, e.work, exp)
				if exp != "" && c.box.leftovers != nil {
					c.box.leftovers(t, e.work, exp)
				}
			})
			out := filepath.Join(e.dir, "out")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd, log := e.start(ctx, t, out)
			waitFor(t, cmd, log, 2*time.Minute, "never reached phase "+c.phase, func() bool {
				return strings.Count(log.String(), "msg="+c.phase+" ") >= c.nth
			})
			exp = experimentOf(e.work, name)
			time.Sleep(time.Second) // inside the phase, not at its first line
			if !strings.Contains(lastPhase(log.String()), "msg="+c.phase+" ") {
				t.Fatalf("the phase %s ended within a second: the signal would hit another\n%s", c.phase, log.String())
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
				t.Fatalf("exit %v, want 130:\n%s", err, log.String())
			}
			if !strings.Contains(log.String(), "received "+c.sig.String()) {
				t.Errorf("no word of the signal in the log:\n%s", log.String())
			}
			if n := storedRuns(t, out); n != c.stored {
				t.Errorf("%d runs stored after %v during %s #%d, want %d", n, c.sig, c.phase, c.nth, c.stored)
			}
			assertNoFaultLeftovers(t, e.work, exp)
			if c.box.leftovers != nil {
				c.box.leftovers(t, e.work, exp)
			}

			b, err := e.boxbench(ctx, "run", e.specFile, "--out", out, "--resume").CombinedOutput()
			if err != nil {
				t.Fatalf("resume: %v\n%s", err, b)
			}
			res, text := e.results(ctx, t, out)
			if len(res.Runs) != 2 {
				t.Fatalf("after resume %d runs stored, want 2:\n%s", len(res.Runs), text)
			}
			for _, r := range res.Runs {
				if r.Status != "ok" {
					t.Errorf("run %s %s after resume:\n%s", r.ID, r.Status, text)
				}
			}
		})
	}
}

// lastPhase is the last phase line of a log ("msg=load", "msg=provision", …).
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
