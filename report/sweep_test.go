package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/stats"
)

// TestSweepCSVGolden: the curves' points as CSV (boxbench report --format sweep-csv).
func TestSweepCSVGolden(t *testing.T) {
	st := openFixture(t, "sweep")
	r, err := Build(st)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteSweepCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep.sweep-csv.golden", b.Bytes())
	if len(r.Sweeps) != 1 || len(r.Sweeps[0].Curves) != 2 {
		t.Fatalf("sweeps %+v", r.Sweeps)
	}
	for _, cv := range r.Sweeps[0].Curves {
		s := cv.Saturation
		want := map[string]struct {
			x    float64
			neck string
		}{"platform=native network=host": {20000, ResServerCPU},
			"platform=docker network=bridge-published": {10000, ResHostCPU + ", mostly outside the box and the client"}}[cv.Label]
		if s == nil || s.X != want.x || s.Bottleneck != want.neck {
			t.Errorf("%s: saturation %+v, want at %g by %q", cv.Label, s, want.x, want.neck)
		}
		for _, p := range cv.Points {
			if p.P99.N != 3 || p.ServiceP99.N != 3 || p.Throughput.N != 3 || len(p.Resources) != 7 {
				t.Errorf("%s: n %d/%d/%d, %d resources", p.Cell, p.Throughput.N, p.P99.N, p.ServiceP99.N, len(p.Resources))
			}
		}
	}
}

func sum(mean float64) stats.Summary { return stats.Summarize([]float64{mean, mean}) }

func curve(offered bool, pts ...[3]float64) *Curve {
	cv := &Curve{offered: offered}
	for _, p := range pts {
		cv.Points = append(cv.Points, &CurvePoint{X: p[0], Throughput: sum(p[1]), P99: sum(p[2]),
			Resources: []ResourceUse{{Name: ResServerCPU, Share: sum(p[1] / 31000)}}})
	}
	return cv
}

// TestSaturationRule: both conditions must hold at one step; the point before it is the
// saturation point.
func TestSaturationRule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cv    *Curve
		at    float64 // 0: none
		neck  string
		notes string
	}{
		{"open loop bends", curve(true, [3]float64{5000, 5000, 200}, [3]float64{10000, 10000, 220},
			[3]float64{20000, 19000, 300}, [3]float64{40000, 30000, 9000}), 20000, ResServerCPU, ""},
		{"throughput follows, p99 flat: not saturated", curve(true, [3]float64{5000, 5000, 200}, [3]float64{10000, 8000, 250}),
			0, "", "not reached up to 10,000"},
		{"p99 climbs but throughput follows", curve(true, [3]float64{5000, 5000, 200}, [3]float64{10000, 9800, 900}),
			0, "", "not reached"},
		// A closed-loop threads sweep: throughput flattens from 20 threads, p99 grows with the queue.
		{"threads sweep", curve(false, [3]float64{5, 10000, 500}, [3]float64{10, 19000, 600}, [3]float64{15, 26000, 700},
			[3]float64{20, 30000, 800}, [3]float64{25, 31000, 1100}, [3]float64{30, 31200, 1300}, [3]float64{35, 31300, 1600}),
			20, "", ""},
		// A dip at 20 000 that 40 000 recovers from is noise; the box saturates at 40 000.
		{"a dip is not saturation", curve(true, [3]float64{10000, 10000, 200}, [3]float64{20000, 15000, 900},
			[3]float64{40000, 39000, 300}, [3]float64{80000, 45000, 50000}), 40000, "", ""},
		{"saturated from the first step", curve(true, [3]float64{5000, 4000, 2000}, [3]float64{10000, 4100, 90000}), 5000, "", ""},
		{"one point", curve(true, [3]float64{5000, 5000, 200}), 0, "", "one point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cv.saturate()
			s := tc.cv.Saturation
			switch {
			case tc.at == 0 && s != nil:
				t.Errorf("saturation %+v, want none", s)
			case tc.at == 0 && !strings.Contains(tc.cv.Note, tc.notes):
				t.Errorf("note %q", tc.cv.Note)
			case tc.at != 0 && (s == nil || s.X != tc.at):
				t.Errorf("saturation %+v, want at %g", s, tc.at)
			case tc.neck != "" && s.Bottleneck != tc.neck:
				t.Errorf("bottleneck %q (%s)", s.Bottleneck, s.Why)
			}
		})
	}
}

func TestBottleneck(t *testing.T) {
	use := func(kv ...any) []ResourceUse {
		var out []ResourceUse
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, ResourceUse{Name: kv[i].(string), Share: sum(kv[i+1].(float64)), Capacity: "x"})
		}
		return out
	}
	for _, tc := range []struct {
		rs   []ResourceUse
		want string
		why  string
	}{
		{use(ResServerCPU, 0.97, ResHostCPU, 0.7, ResOtherCPU, 0.05), ResServerCPU, "server CPU 97 %"},
		{use(ResServerCPU, 0.4, ResHostCPU, 0.95, ResOtherCPU, 0.6), ResHostCPU + ", mostly outside the box and the client", ""},
		{use(ResServerCPU, 0.5, ResHostCPU, 0.9, ResOtherCPU, 0.1, ResClientCPU, 0.85), ResHostCPU, ""},
		{use(ResDisk, 0.91, ResServerCPU, 0.3), ResDisk, ""},
		{use(ResServerCPU, 0.5, ResSoftirq, 0.6), "", "no resource at 80 % or more of its capacity: network softirq 60 %"},
		{nil, "", "no telemetry"},
	} {
		got, why := bottleneck(tc.rs)
		if got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%v: %q (%s), want %q", tc.rs, got, why, tc.want)
		}
	}
}

func TestCPUCount(t *testing.T) {
	for in, want := range map[string]int{"": 0, "0": 1, "0-1": 2, "0,2-3": 3, "3-1": 0, "x": 0} {
		if got := cpuCount(in); got != want {
			t.Errorf("cpuCount(%q) = %d, want %d", in, got, want)
		}
	}
}
