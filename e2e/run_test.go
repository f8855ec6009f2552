package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestRunAndResults: a fresh experiment stores ok runs for the supported cells, with the
// client's placement read back, and lists the unsupported one as skipped with its reason; the
// results table and a run's series come out of the binary; a second run into the same --out
// is refused.
func TestRunAndResults(t *testing.T) {
	parallel(t)
	testenv.NeedCommands(t, "redis-server")
	testenv.Hold(t, "cpu0")
	e := newEnv(t, spec{Name: "basic", Records: 2000,
		Workload: "{type: ycsb, mix: read-heavy, threads: 2, duration: 1s, warmup: 1s}",
		Matrix:   "  platform: [native]\n  storage: [bind, tmpfs, overlay]",
		Extra: "baseline: {platform: native, storage: bind}\nstorageOptions: {tmpfs: {size: 256MiB}}\n" +
			"placement: {client: \"0\", clientPolicy: idle}\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// -q: no progress output at all (it once crashed the run with a nil progress sink).
	out, _ := e.run(ctx, t, "-q")
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

// TestResumeAfterKill kills boxbench's whole process group with SIGKILL while the third of six
// runs measures, then resumes without doctor --cleanup: resume removes the killed run's
// leftovers itself and says so, and every planned run is stored exactly once.
func TestResumeAfterKill(t *testing.T) {
	parallel(t)
	testenv.NeedCommands(t, "redis-server")
	e := newEnv(t, spec{Name: "resume", Reps: "3", Matrix: "  platform: [native]\n  storage: [bind, tmpfs]",
		Extra: "storageOptions: {tmpfs: {size: 256MiB}}\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	r := e.start(ctx, t)
	// Two runs stored and the third measuring (its server up in its cgroup): the server is
	// orphaned by the kill, and resume must remove it.
	r.waitFor(t, 4*time.Minute, "the third run never started measuring", func() bool {
		return len(runIDs(t, r.out)) >= 2 && strings.Count(r.log.String(), "warmup+measure") >= 3
	})
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	_ = r.cmd.Wait()
	before := len(runIDs(t, r.out))
	b := e.resume(ctx, t, r.out, 6)
	seen := map[string]bool{}
	for _, id := range runIDs(t, r.out) {
		if seen[id] {
			t.Errorf("run %s stored twice", id)
		}
		seen[id] = true
	}
	if !bytes.Contains(b, []byte("removed leftover")) {
		t.Errorf("resume did not report removing the killed run's leftovers (before: %d runs stored):\n%s", before, b)
	}
}

// TestNeighbours runs a database beside an fio and a stress-ng neighbour: the runs store the
// neighbours' own throughput and the configured and obtained shares, and the neighbours' boxes
// are gone afterwards.
func TestNeighbours(t *testing.T) {
	parallel(t)
	testenv.NeedCommands(t, "postgres", "fio", "stress-ng")
	e := newEnv(t, spec{Name: "neighbours", DBMS: "postgresql", Reps: "1",
		Workload: "{type: ycsb, mix: write-heavy, threads: 2, duration: 2s, warmup: 1s}",
		Limits:   "{cpus: 1, memory: 512MiB, ioWeight: 70, cpuWeight: 70}",
		Matrix:   "  platform: [native]\n  neighbour: [none, fsync-high, cpu-hog]",
		Extra: `neighbours:
  fsync-high: {workload: {type: fio, job: fsync-high, size: 32MiB}, limits: {ioWeight: 30, cpuWeight: 30}}
  cpu-hog: {workload: {type: stress, cpu: 1}, limits: {cpus: 0.5}}
baseline: {neighbour: none}
`})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	out, _ := e.run(ctx, t)
	b := e.report(ctx, t, out, "json")
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
	t.Parallel()
	testenv.NeedCommands(t, "redis-server")
	// The effect target under pairing: rounds, whose detectable effect is the paired one.
	for _, target := range []string{"targetCIHalfWidth: 0.001%", "targetEffect: 0.001%"} {
		t.Run(strings.Fields(target)[0], func(t *testing.T) {
			parallel(t)
			effect := strings.HasPrefix(target, "targetEffect")
			order := "sequential"
			if effect {
				order = "randomized\npairing: rounds"
			}
			e := newEnv(t, spec{Name: "adaptive", Records: 2000, Reps: "{min: 2, max: 3, " + target + "}", Order: order,
				Workload: "{type: ycsb, mix: read-heavy, threads: 2, duration: 1s, warmup: 1s}",
				Matrix:   "  platform: [native]\n  storage: [bind, tmpfs]",
				Extra:    "baseline: {platform: native, storage: bind}\nstorageOptions: {tmpfs: {size: 256MiB}}\n"})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			out, b := e.run(ctx, t)
			if n := len(runIDs(t, out)); n != 6 {
				t.Errorf("%d runs, want 2 cells × 3 (min 2, one adaptive round)", n)
			}
			if !bytes.Contains(b, []byte("adaptive repetitions:")) || !bytes.Contains(b, []byte("run 3 added")) {
				t.Errorf("the report does not show the adaptive decisions:\n%s", b)
			}
			if effect && !bytes.Contains(b, []byte("paired detectable effect")) {
				t.Errorf("the adaptive decisions under pairing: rounds do not give the paired detectable effect:\n%s", b)
			}
		})
	}
}

// TestClientPolicyPerCell: with clientPolicy in the matrix, each run's workload runs under the
// policy its cell gives the client (client_policy is read back from the kernel meanwhile).
func TestClientPolicyPerCell(t *testing.T) {
	parallel(t)
	testenv.NeedCommands(t, "redis-server")
	testenv.Hold(t, "cpu0")
	e := newEnv(t, spec{Name: "policy", Records: 2000, Reps: "1",
		Workload: "{type: ycsb, mix: read-heavy, threads: 2, duration: 1s, warmup: 1s}",
		Matrix:   "  platform: [native]\n  storage: [bind]\n  clientPolicy: [normal, idle]",
		Extra:    "placement: {client: \"0\"}\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, _ := e.run(ctx, t)
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
