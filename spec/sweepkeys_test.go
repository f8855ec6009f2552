package spec

import (
	"strings"
	"testing"

	"github.com/boxbench/boxbench/workload/fio"
	"github.com/boxbench/boxbench/workload/ycsb"
)

const sweep = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: s
dbms: redis
workload: {type: ycsb, mix: read-heavy, duration: 20s}
dataset: {records: 1000}
matrix:
  platform: [native, docker]
  workload.targetRate: [1000, 2000, 4000]
`

func TestSweepKeys(t *testing.T) {
	e, err := Parse([]byte(sweep), "s.yaml", vocab)
	if err != nil {
		t.Fatal(err)
	}
	w := e.WorkloadFor("", map[string]string{"workload.targetRate": "4000", "workload.threads": "16", "workload.proportions.read": "0.5"})
	s := ycsb.SectionOf(w.Own)
	if s.TargetRate != 4000 || w.Threads != 16 || s.ReadProportion == nil || *s.ReadProportion != 0.5 {
		t.Errorf("WorkloadFor: rate %g threads %d read %v", s.TargetRate, w.Threads, s.ReadProportion)
	}
	if s := ycsb.SectionOf(e.Workload.Own); s.TargetRate != 0 || s.ReadProportion != nil || e.Workload.Threads != 8 {
		t.Errorf("WorkloadFor changed the spec's workload: %+v", e.Workload)
	}
	if RecordsOf(map[string]string{"dataset.records": "5000"}) != 5000 || RecordsOf(nil) != 0 {
		t.Error("RecordsOf")
	}
}

// TestSweepFio: an iodepth sweep turns a preset into a job map, and leaves the spec's map alone.
func TestSweepFio(t *testing.T) {
	src := strings.NewReplacer("type: ycsb, mix: read-heavy", "type: fio, job: {preset: randread-4k, ioengine: libaio}",
		"workload.targetRate: [1000, 2000, 4000]", "workload.job.iodepth: [1, 4, 16]", "dataset: {records: 1000}\n", "").Replace(sweep)
	e, err := Parse([]byte(src), "f.yaml", vocab)
	if err != nil {
		t.Fatal(err)
	}
	w := e.WorkloadFor("", map[string]string{"workload.job.iodepth": "16"})
	job, _ := fio.SectionOf(w.Own).Job.(map[string]any)
	if job["iodepth"] != 16 || job["preset"] != "randread-4k" || job["ioengine"] != "libaio" {
		t.Errorf("job %v", job)
	}
	if _, set := fio.SectionOf(e.Workload.Own).Job.(map[string]any)["iodepth"]; set {
		t.Error("WorkloadFor wrote into the spec's job map")
	}
}

// TestSweepProblems: every bad sweep is reported at once, naming the field, the value and
// what is valid.
func TestSweepProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(string) string
		want []string
		n    int
	}{
		{"bare name", r("workload.targetRate:", "targetRate:"),
			[]string{`line 9: matrix.targetRate: unknown matrix key "targetRate"; did you mean "workload.targetRate"?`}, 1},
		{"record count alias", r("workload.targetRate: [1000, 2000, 4000]", "recordCount: [10, 20]"),
			[]string{`did you mean "dataset.records"?`}, 1},
		{"bad values all at once", r("[1000, 2000, 4000]", "[0, -5, 1e3, fast, 2000, 2000.0]"), []string{
			`matrix.workload.targetRate: "0" is not valid (valid: operations/s from 0.001 to 1e9`,
			`"-5" is not valid`, `"1e3" is not valid`, `"fast" is not valid`,
			`matrix.workload.targetRate: values "2000" and "2000.0" are the same workload.targetRate`}, 5},
		{"threads out of range", r("workload.targetRate: [1000, 2000, 4000]", "workload.threads: [5, 10, 5000]"),
			[]string{`matrix.workload.threads: "5000" is not valid (valid: a whole number of client threads, 1 to 4096)`}, 1},
		{"field also written", r("mix: read-heavy,", "mix: read-heavy, targetRate: 500,"),
			[]string{`line 5: workload.targetRate: the matrix varies workload.targetRate: leave workload.targetRate out`}, 1},
		{"wrong workload type", r("workload.targetRate:", "workload.rate:"),
			[]string{`matrix.workload.rate: applies to workload type sysbench only, but workload is ycsb`}, 1},
		{"records and bound", func(s string) string {
			return strings.NewReplacer("dataset: {records: 1000}", "dataset: {bound: memory}\nlimits: {memory: 1GiB}",
				"workload.targetRate: [1000, 2000, 4000]", "dataset.records: [1000, 10000]").Replace(s)
		}, []string{`matrix.dataset.records: a data set is sized by records or by bound, not both`}, 1},
		{"records written too", r("workload.targetRate: [1000, 2000, 4000]", "dataset.records: [1000, 10000]"),
			[]string{`dataset.records: the matrix varies dataset.records: leave dataset.records out`}, 1},
		{"iodepth with a synchronous engine", func(s string) string {
			return strings.NewReplacer("type: ycsb, mix: read-heavy", "type: fio, job: randread-4k", "dataset: {records: 1000}\n", "",
				"workload.targetRate: [1000, 2000, 4000]", "workload.job.iodepth: [1, 8]").Replace(s)
		}, []string{`matrix.workload.job.iodepth: workload's ioengine psync issues one I/O at a time per job, so iodepth changes nothing (valid: a job map with ioengine libaio, io_uring, posixaio`}, 1},
		{"distribution typo", r("workload.targetRate: [1000, 2000, 4000]", "workload.requestDistribution: [uniform, zipf]"),
			[]string{`matrix.workload.requestDistribution: "zipf" is not valid (valid: uniform, zipfian, latest, hotspot)`}, 1},
		{"baseline with a bad sweep value", func(s string) string { return s + "baseline: {platform: native, workload.targetRate: \"-1\"}\n" },
			[]string{`baseline: workload.targetRate=-1 is not in the matrix`, `baseline: workload.targetRate="-1" is not a valid value`}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.edit(sweep)), "s.yaml", vocab)
			se, ok := err.(*Error)
			if !ok {
				t.Fatalf("want *spec.Error, got %v", err)
			}
			text := se.Error()
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			if tc.n > 0 && len(se.Problems) != tc.n {
				t.Errorf("%d problems, want %d:\n%s", len(se.Problems), tc.n, text)
			}
		})
	}
}

// TestSweepNamedWorkloads: threads applies to every type; targetRate names the workload that
// is not ycsb.
func TestSweepNamedWorkloads(t *testing.T) {
	src := strings.NewReplacer("workload: {type: ycsb, mix: read-heavy, duration: 20s}",
		"workloads:\n  y: {type: ycsb, duration: 20s}\n  s: {type: sysbench, test: oltp_read_only, duration: 20s}",
		"workload.targetRate: [1000, 2000, 4000]", "workload: [y, s]\n  workload.threads: [5, 10]").Replace(sweep)
	if _, err := Parse([]byte(src), "n.yaml", vocab); err != nil {
		t.Fatalf("threads over ycsb and sysbench: %v", err)
	}
	bad := strings.Replace(src, "workload.threads: [5, 10]", "workload.targetRate: [5, 10]", 1)
	_, err := Parse([]byte(bad), "n.yaml", vocab)
	if err == nil || !strings.Contains(err.Error(), "applies to workload type ycsb only, but workloads.s is sysbench") {
		t.Errorf("got %v", err)
	}
}
