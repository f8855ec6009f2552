package compare

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/report"
	"github.com/boxbench/boxbench/stats"
)

// memReport builds a report in memory from throughput samples per cell id ("k=v" ids).
func memReport(id string, env map[string]string, samples map[string][]float64, p99 float64) *report.Report {
	r := &report.Report{Experiment: report.Experiment{ID: id, Name: "gate"}, Env: env, Spec: "name: gate\n"}
	for _, cid := range []string{"platform=native", "platform=docker", "platform=kata"} {
		xs, ok := samples[cid]
		if !ok {
			continue
		}
		c := &report.Cell{ID: cid, Params: map[string]string{"platform": strings.TrimPrefix(cid, "platform=")}, Samples: xs, Runs: len(xs), Throughput: stats.Summarize(xs)}
		if len(xs) > 0 {
			c.Latency = []report.OpLatency{{Op: "read", Count: 1000, P99: p99}}
		}
		r.Cells = append(r.Cells, c)
	}
	return r
}

func TestCompareGate(t *testing.T) {
	base := memReport("before", map[string]string{"kernel": "6.1.0"}, map[string][]float64{
		"platform=native": {1000, 1010, 990, 1005, 995},
		"platform=docker": {980, 990, 970, 985, 975},
		"platform=kata":   {500, 505},
	}, 400)
	cases := []struct {
		name      string
		docker    []float64
		tolerance float64
		regressed bool
	}{
		{"10 % slower, 5 % tolerance", []float64{882, 891, 873, 886, 878}, 0.05, true},
		{"10 % slower, 15 % tolerance", []float64{882, 891, 873, 886, 878}, 0.15, false},
		{"same", []float64{985, 975, 990, 970, 980}, 0.05, false},
		{"faster", []float64{1078, 1089, 1067, 1083, 1072}, 0, false},
		{"noisy, not significant", []float64{700, 1300, 900, 1100, 880}, 0.05, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next := memReport("after", map[string]string{"kernel": "6.12.9"}, map[string][]float64{
				"platform=native": {1000, 1010, 990, 1005, 995},
				"platform=docker": c.docker,
				"platform=kata":   {400, 405},
			}, 420)
			cmp, err := New(base, next, c.tolerance)
			if err != nil {
				t.Fatal(err)
			}
			if cmp.Regressed() != c.regressed {
				t.Errorf("Regressed() = %t, want %t", cmp.Regressed(), c.regressed)
			}
			// kata lost 20 % but with 2 runs a side no test can tell: not a regression,
			// and the comparison must say it is blind there.
			if u := cmp.Underpowered(); len(u) != 1 || u[0] != "platform=kata" {
				t.Errorf("Underpowered() = %v, want [platform=kata]", u)
			}
			if len(cmp.Env) != 1 || cmp.Env[0].Key != "kernel" {
				t.Errorf("environment changes %+v, want the kernel", cmp.Env)
			}
			var b bytes.Buffer
			if err := WriteText(&b, cmp); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(b.String(), "FAIL:"); got != c.regressed {
				t.Errorf("text result says FAIL=%t, want %t:\n%s", got, c.regressed, b.String())
			}
		})
	}
}

func TestCompareErrors(t *testing.T) {
	a := memReport("a", nil, map[string][]float64{"platform=native": {1, 2, 3}}, 1)
	b := memReport("b", nil, map[string][]float64{"platform=docker": {1, 2, 3}}, 1)
	if _, err := New(a, b, 0.05); err == nil {
		t.Error("no matching cell: want an error")
	}
	for _, tol := range []float64{-0.01, 1, 5} {
		if _, err := New(a, a, tol); err == nil {
			t.Errorf("tolerance %v: want an error", tol)
		}
	}
	empty := memReport("c", nil, map[string][]float64{"platform=native": {}}, 1)
	cmp, err := New(a, empty, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Cells[0].Throughput != nil || cmp.Cells[0].Note == "" || cmp.Regressed() {
		t.Errorf("a cell without ok runs: %+v", cmp.Cells[0])
	}
}

func TestCompareGolden(t *testing.T) {
	base := memReport("20250314-090000-gate", map[string]string{"kernel": "6.1.0-31-amd64", "hostname": "bench-07"},
		map[string][]float64{
			"platform=native": {1000, 1010, 990, 1005, 995},
			"platform=docker": {980, 990, 970, 985, 975},
			"platform=kata":   {500, 505},
		}, 412.5)
	next := memReport("20250401-090000-gate", map[string]string{"kernel": "6.12.9-amd64", "hostname": "bench-07"},
		map[string][]float64{
			"platform=native": {1002, 1012, 992, 1003, 996},
			"platform=docker": {882, 891, 873, 886, 878},
		}, 433.1)
	cmp, err := New(base, next, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	var txt, js bytes.Buffer
	if err := WriteText(&txt, cmp); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, cmp); err != nil {
		t.Fatal(err)
	}
	golden(t, "text.golden", txt.Bytes())
	golden(t, "json.golden", js.Bytes())
}

var update = flag.Bool("update", false, "rewrite compare/testdata/*.golden")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test ./compare -update and review the diff):\n%s", name, got)
	}
}
