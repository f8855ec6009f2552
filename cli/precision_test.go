package cli

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/calibration"
	"github.com/boxbench/boxbench/internal/hostenv"
	"github.com/boxbench/boxbench/report"
	"github.com/boxbench/boxbench/spec"
)

// The forecast reads the floor at the calibration's largest n, for the spec's design, and says
// what its runs detect and what its targetEffect needs; without this host's calibration it
// says that there is none.
func TestForecast(t *testing.T) {
	env := map[string]string{"cpu_model": "AMD EPYC", "num_cpu": "2", "kernel": "6.18"}
	cal := &calibration.Stored{Experiment: "calibrate-1", Host: env,
		Floors: []calibration.Floor{{N: 4, Tests: 4, Unpaired: 40, Paired: 38}, {N: 10, Tests: 2, Unpaired: 14, Paired: 9}}}
	h := hostPrecision{env: env, cal: cal}
	e := &spec.Experiment{Order: "randomized", Repetitions: spec.Repetitions{Min: 10, Max: 10, TargetEffect: 0.03}}
	got := strings.Join(h.forecast(e), "\n")
	// An unpaired floor of ±14 % at n = 10 is the floor's own n: detectable ≈ 14·(t.975+t.8)/t.975 ≈ 19.7 %.
	for _, want := range []string{"at 10 runs per cell (unpaired, from the floor at n = 10): detectable effect ≈ 19.7 %",
		"targetEffect 3 % needs ≈ 389 runs per cell"} {
		if !strings.Contains(got, want) {
			t.Errorf("forecast lacks %q:\n%s", want, got)
		}
	}
	// Paired by round after a randomized calibration: from its paired floor, ±9 % at n = 10, on
	// the log scale; the calibration's design, so nothing to warn of.
	e.Pairing = "rounds"
	if got := strings.Join(h.forecast(e), "\n"); !strings.Contains(got, "(paired by round, from the floor at n = 10): detectable effect ≈ 12.7 %") ||
		strings.Contains(got, "another order") {
		t.Errorf("a spec paired by round after a randomized calibration:\n%s", got)
	}
	e.Order, e.Pairing = "duet", "duets"
	if got := strings.Join(h.forecast(e), "\n"); !strings.Contains(got, "paired by duet") || !strings.Contains(got, "another order") {
		t.Errorf("a duet spec after a randomized calibration:\n%s", got)
	}
	e.Repetitions.TargetEffect = 0.0001
	if got := strings.Join(h.forecast(e), "\n"); !strings.Contains(got, "out of reach") {
		t.Errorf("an unreachable target:\n%s", got)
	}
	// A calibration of another database or workload warns; one of this spec's does not.
	e.Order, e.Pairing, e.DBMS, e.Workload.Type = "randomized", "rounds", "redis", "ycsb"
	cal.DBMS, cal.Workload = "postgresql", "sysbench"
	if got := strings.Join(h.forecast(e), "\n"); !strings.Contains(got, "the calibration measured postgresql (sysbench), this spec runs redis (ycsb)") {
		t.Errorf("a Redis spec after a PostgreSQL calibration:\n%s", got)
	}
	cal.DBMS, cal.Workload = "redis", "ycsb"
	if got := strings.Join(h.forecast(e), "\n"); strings.Contains(got, "the calibration measured") {
		t.Errorf("a Redis spec after a Redis calibration:\n%s", got)
	}
	h.otherHost = true
	if got := h.forecast(e); len(got) != 1 || !strings.Contains(got[0], "no forecast") {
		t.Errorf("another host's calibration forecast: %v", got)
	}
	// Client and server on different cpus of a host where crossing costs: said.
	h.wake.SameCPU.Wall, h.wake.CrossCPU.Wall = 6*time.Microsecond, 106*time.Microsecond
	e.Order, e.Pairing, e.Placement.Client, e.Placement.Server = "randomized", "none", "1", "0"
	if got := strings.Join(h.forecast(e), "\n"); !strings.Contains(got, "client (cpus 1) and server (cpus 0) are on different cpus") ||
		!strings.Contains(got, "106 µs wall here against 6 µs") {
		t.Errorf("the cross-cpu cost is not said:\n%s", got)
	}
	if got := strings.Join(h.lines(), "\n"); !strings.Contains(got, "another host") {
		t.Errorf("lines do not say the calibration is another host's:\n%s", got)
	}
}

// run keeps the calibration of an experiment it ran on this host, and only then, naming the
// results file it came from.
func TestKeepCalibration(t *testing.T) {
	cell := func(replica string, vals []float64) *report.Cell {
		id := "replica=" + replica
		c := &report.Cell{ID: id, Params: map[string]string{"replica": replica}, BaselineID: "replica=a", Runs: len(vals)}
		for i, v := range vals {
			c.RunIDs, c.Reps = append(c.RunIDs, fmt.Sprintf("%s#%d", id, i+1)), append(c.Reps, i+1)
			c.Samples = append(c.Samples, v)
			c.Untruncated = append(c.Untruncated, math.NaN())
		}
		return c
	}
	vals := func(k int) (out []float64) {
		for r := 0; r < 4; r++ {
			out = append(out, 1000*(1+0.02*float64((r+k)%3)))
		}
		return out
	}
	rep := &report.Report{Keys: []string{"replica"}, Env: hostenv.Capture(), Experiment: report.Experiment{ID: "cal-1"},
		Cells: []*report.Cell{cell("a", vals(0)), cell("b", vals(1))}}
	var stderr bytes.Buffer
	a := &app{stderr: &stderr, workRoot: t.TempDir()}
	a.keepCalibration(rep, "/srv/out/cal/results.db")
	got, err := calibration.Load(a.workRoot)
	if err != nil || got == nil || got.Experiment != "cal-1" || got.Results != "/srv/out/cal/results.db" || len(got.Floors) != 1 || got.Floors[0].N != 4 {
		t.Fatalf("kept %+v %v (%s)", got, err, stderr.String())
	}
	// Another host's results reported here leave this host's calibration alone.
	rep.Env = map[string]string{"cpu_model": "elsewhere"}
	rep.Experiment.ID = "cal-2"
	a.keepCalibration(rep, "/srv/out/cal-2/results.db")
	if got, _ := calibration.Load(a.workRoot); got == nil || got.Experiment != "cal-1" {
		t.Errorf("another host's calibration replaced this host's: %+v", got)
	}
}
