package plan

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/testkit/vocabtest"
)

// threadSweep is the scalability test of the orchestrator study: client threads growing by 5,
// on every platform.
const threadSweep = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: threads
dbms: postgresql
workload: {type: ycsb, mix: write-heavy, duration: 10s}
dataset: {records: 1000}
matrix:
  platform: [native, docker]
  workload.threads: [5, 10, 15, 20, 25, 30, 35, 40]
repetitions: 2
seed: 3
`

// TestThreadSweep: a threads sweep 5…40 plans one cell per platform and count, in numeric
// order, each compared with native at the same count, and each cell's workload gets its count.
func TestThreadSweep(t *testing.T) {
	e, err := spec.Parse([]byte(threadSweep), "t.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	p, problems := Expand(context.Background(), e, 1, noContainerLayer)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if len(p.Cells) != 16 || len(p.Runs) != 32 {
		t.Fatalf("%d cells, %d runs; want 16, 32", len(p.Cells), len(p.Runs))
	}
	for i, c := range p.Cells {
		want := 5 * (i%8 + 1)
		if got := c.Params["workload.threads"]; got != strconv.Itoa(want) {
			t.Errorf("cell %d is %s: want threads %d (numeric order)", i, c.ID, want)
		}
		if w := e.WorkloadFor(c.Workload, c.Params); w.Threads != want {
			t.Errorf("%s: workload threads %d", c.ID, w.Threads)
		}
		b := p.Baseline[c]
		if b == nil || b.Platform != "native" || b.Params["workload.threads"] != c.Params["workload.threads"] {
			t.Errorf("%s: baseline %v", c.ID, b)
		}
	}
	if !strings.HasPrefix(p.Cells[0].ID, "platform=docker/workload.threads=5") {
		t.Errorf("first cell %s", p.Cells[0].ID)
	}
}

// TestRecordSweep: dataset.records sizes each cell's data set.
func TestRecordSweep(t *testing.T) {
	src := strings.NewReplacer("dataset: {records: 1000}\n", "", "workload.threads: [5, 10, 15, 20, 25, 30, 35, 40]",
		"dataset.records: [1000, 100000, 20000]").Replace(threadSweep)
	e, err := spec.Parse([]byte(src), "r.yaml", vocabtest.Vocabulary())
	if err != nil {
		t.Fatal(err)
	}
	p, problems := Expand(context.Background(), e, 1, noContainerLayer)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var got []string
	for _, c := range p.Cells[:3] {
		if strconv.FormatInt(c.Records, 10) != c.Params["dataset.records"] {
			t.Errorf("%s: records %d", c.ID, c.Records)
		}
		got = append(got, c.Params["dataset.records"])
	}
	if strings.Join(got, ",") != "1000,20000,100000" {
		t.Errorf("order %v", got)
	}
}

func TestLessID(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{
		{"platform=docker/workload.threads=5", "platform=docker/workload.threads=10", true},
		{"platform=docker/workload.threads=40", "platform=native/workload.threads=5", true},
		{"platform=vm-docker/storage=bind", "platform=vm/storage=bind", true}, // string order where values are not numbers
		{"workload.targetRate=500.5", "workload.targetRate=2000", true},
		{"cpuset=10", "cpuset=9", true}, // not a sweep key: string order, as before
		{"workload.threads=2", "workload.threads=2", false},
	} {
		if got := lessID(tc.a, tc.b); got != tc.less {
			t.Errorf("lessID(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}
