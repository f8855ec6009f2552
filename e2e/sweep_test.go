package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestSweep runs a targetRate sweep on a real Redis: one seed for both rates, every run open
// loop at its own rate, and the report's curve has both points with the corrected and the
// service latency apart (corrected ≥ service: it counts from the intended start), resource
// shares from telemetry, and the same points in sweep-csv.
func TestSweep(t *testing.T) {
	parallel(t)
	testenv.NeedCommands(t, "redis-server")
	testenv.Hold(t, "cpu0")
	e := newEnv(t, spec{Name: "sweep", Records: 2000,
		Workload: "{type: ycsb, mix: read-heavy, threads: 2, duration: 1s, warmup: 1s}",
		Matrix:   "  platform: [native]\n  workload.targetRate: [200, 4000000]",
		Extra:    "placement: {client: \"0\"}\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, _, b := e.runStored(ctx, t, 4)
	js := e.report(ctx, t, out, "json")
	var rep struct {
		Sweeps []struct {
			Key     string `json:"key"`
			Offered bool   `json:"offered_load"`
			Curves  []struct {
				Points []struct {
					X          float64         `json:"x"`
					Throughput struct{ N int } `json:"throughput_ops_per_second"`
					P99        struct {
						N    int
						Mean float64
					} `json:"latency_p99_us"`
					Service struct {
						N    int
						Mean float64
					} `json:"service_p99_us"`
					Resources []struct{ Name string } `json:"resources"`
				} `json:"points"`
			} `json:"curves"`
		} `json:"sweeps"`
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Sweeps) != 1 || rep.Sweeps[0].Key != "workload.targetRate" || !rep.Sweeps[0].Offered || len(rep.Sweeps[0].Curves) != 1 {
		t.Fatalf("sweeps: %s", js)
	}
	pts := rep.Sweeps[0].Curves[0].Points
	if len(pts) != 2 || pts[0].X != 200 || pts[1].X != 4000000 {
		t.Fatalf("points: %+v", pts)
	}
	for _, p := range pts {
		var names []string
		for _, r := range p.Resources {
			names = append(names, r.Name)
		}
		if p.Throughput.N != 2 || p.P99.N != 2 || p.Service.N != 2 || p.P99.Mean < p.Service.Mean ||
			!strings.Contains(strings.Join(names, ","), "server CPU") || !strings.Contains(strings.Join(names, ","), "client CPU") {
			t.Errorf("point %g: n %d/%d/%d, p99 corrected %g < service %g, resources %v", p.X, p.Throughput.N, p.P99.N,
				p.Service.N, p.P99.Mean, p.Service.Mean, names)
		}
	}
	// One seed serves both rates: the data set does not depend on the rate.
	seeds := map[string]bool{}
	var facts struct {
		Runs []struct {
			Facts map[string]string `json:"facts"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &facts); err != nil {
		t.Fatal(err)
	}
	for _, r := range facts.Runs {
		if r.Facts["seed"] == "" {
			t.Errorf("a run without a seed fact: %v", r.Facts)
		}
		seeds[r.Facts["seed"]] = true
	}
	if len(seeds) != 1 {
		t.Errorf("seeds %v: a rate sweep must load once", seeds)
	}
	csv, err := e.boxbench(ctx, "report", out, "--format", "sweep-csv").Output()
	if err != nil || strings.Count(string(csv), "\n") != 3 {
		t.Errorf("sweep-csv: %v\n%s", err, csv)
	}
	html := filepath.Join(e.dir, "report.html")
	if b, err := e.boxbench(ctx, "report", out, "--html", html).CombinedOutput(); err != nil {
		t.Errorf("report --html: %v\n%s", err, b)
	}
}
