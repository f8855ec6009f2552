package builtin

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload/fio"
	"github.com/boxbench/boxbench/workload/sysbench"
	"github.com/boxbench/boxbench/workload/ycsb"
)

const sweepSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: sweep
dbms: redis
workload: {type: ycsb, mix: b, duration: 10s}
matrix:
  workload.threads: [4, 8]
  workload.targetRate: [1000, 5000]
  workload.proportions.read: [0.5, 0.9]
  dataset.records: [1000, 2000]
`

// TestSweepWorkloads: each cell's workload gets its sweep values; the seed (LoadKey) follows
// the record count and nothing else, so a load sweep loads its data once.
func TestSweepWorkloads(t *testing.T) {
	e, err := spec.Parse([]byte(sweepSpec), "s.yaml", Vocabulary(Platforms(nil)))
	if err != nil {
		t.Fatal(err)
	}
	p, problems := plan.Expand(context.Background(), e, 1, func(context.Context, *plan.Cell) error { return nil })
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	keys := map[string]map[string]bool{} // records → load keys
	for _, c := range p.Cells {
		wl, err := Workload(e, c)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		y := wl.(*ycsb.Workload)
		cfg := y.Config()
		if got := cfg.Threads; itoa(got) != c.Params["workload.threads"] {
			t.Errorf("%s: threads %d", c.ID, got)
		}
		if ftoa(cfg.TargetRate) != c.Params["workload.targetRate"] || cfg.ReadProportion == nil ||
			ftoa(*cfg.ReadProportion) != c.Params["workload.proportions.read"] || cfg.Mix != "b" {
			t.Errorf("%s: rate %g read %v mix %q", c.ID, cfg.TargetRate, cfg.ReadProportion, cfg.Mix)
		}
		r := c.Params["dataset.records"]
		if keys[r] == nil {
			keys[r] = map[string]bool{}
		}
		keys[r][y.LoadKey()] = true
	}
	if len(keys) != 2 || len(keys["1000"]) != 1 || len(keys["2000"]) != 1 {
		t.Errorf("load keys by record count: %v", keys)
	}
}

// TestSweepSysbench: tableSize changes the seed, threads and rate do not.
func TestSweepSysbench(t *testing.T) {
	src := strings.NewReplacer("dbms: redis", "dbms: postgresql", "type: ycsb, mix: b", "type: sysbench, test: oltp_read_only",
		"  workload.targetRate: [1000, 5000]\n  workload.proportions.read: [0.5, 0.9]\n  dataset.records: [1000, 2000]\n",
		"  workload.rate: [100, 200]\n  workload.tableSize: [1000, 2000]\n").Replace(sweepSpec)
	e, err := spec.Parse([]byte(src), "s.yaml", Vocabulary(Platforms(nil)))
	if err != nil {
		t.Fatal(err)
	}
	p, problems := plan.Expand(context.Background(), e, 1, func(context.Context, *plan.Cell) error { return nil })
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	keys := map[string]bool{}
	for _, c := range p.Cells {
		wl, err := Workload(e, c)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		cfg := wl.(*sysbench.Workload).Config()
		if itoa(cfg.Threads) != c.Params["workload.threads"] || ftoa(cfg.Rate) != c.Params["workload.rate"] ||
			itoa(int(cfg.TableSize)) != c.Params["workload.tableSize"] {
			t.Errorf("%s: %+v", c.ID, cfg)
		}
		keys[wl.LoadKey()] = true
	}
	if len(keys) != 2 {
		t.Errorf("%d seeds, want one per table size: %v", len(keys), keys)
	}
}

func itoa(n int) string     { return strconv.Itoa(n) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// TestSweepFioIodepth: the iodepth of each cell reaches fio's command line.
func TestSweepFioIodepth(t *testing.T) {
	src := strings.NewReplacer("dbms: redis", "dbms: postgresql",
		"type: ycsb, mix: b", "type: fio, job: {preset: randread-4k, ioengine: libaio}",
		"  workload.threads: [4, 8]\n  workload.targetRate: [1000, 5000]\n  workload.proportions.read: [0.5, 0.9]\n  dataset.records: [1000, 2000]\n",
		"  workload.job.iodepth: [1, 32]\n").Replace(sweepSpec)
	e, err := spec.Parse([]byte(src), "f.yaml", Vocabulary(Platforms(nil)))
	if err != nil {
		t.Fatal(err)
	}
	p, problems := plan.Expand(context.Background(), e, 1, func(context.Context, *plan.Cell) error { return nil })
	if len(problems) > 0 || len(p.Cells) != 2 {
		t.Fatalf("%v, %d cells", problems, len(p.Cells))
	}
	for _, c := range p.Cells {
		wl, err := Workload(e, c)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		argv := strings.Join(wl.(*fio.Workload).Argv("/data"), " ")
		if !strings.Contains(argv, "--iodepth="+c.Params["workload.job.iodepth"]+" ") && !strings.HasSuffix(argv, "--iodepth="+c.Params["workload.job.iodepth"]) {
			t.Errorf("%s: %s", c.ID, argv)
		}
		if !strings.Contains(argv, "--ioengine=libaio") || !strings.Contains(argv, "--rw=randread") {
			t.Errorf("%s: the preset's options lost: %s", c.ID, argv)
		}
	}
}
