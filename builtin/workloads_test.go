package builtin

import (
	"context"
	"testing"

	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/spec"
)

// TestWorkloadRows: every measured kind of the table builds a cell's workload from a spec that
// names it, and what the built workload says it can do (Traits.Remote, read by the runner)
// agrees with what its row tells the spec (WorkloadKind.Remote, read by the duet check).
func TestWorkloadRows(t *testing.T) {
	fields := map[string]string{"ycsb": "mix: a", "sysbench": "test: oltp_read_only", "fio": "job: randread-4k"}
	built := 0
	for _, k := range Workloads() {
		if k.Build == nil {
			continue
		}
		text := `apiVersion: boxbench/v1alpha1
kind: Experiment
name: rows
dbms: postgresql
workload: {type: ` + k.Name + `, ` + fields[k.Name] + `, duration: 2s}
dataset: {records: 100}
matrix:
  platform: [native]
repetitions: 1
`
		e, err := spec.Parse([]byte(text), "rows.yaml", Vocabulary(Platforms(nil)))
		if err != nil {
			t.Errorf("%s: %v", k.Name, err)
			continue
		}
		ps := Platforms(nil)
		p, problems := plan.Expand(context.Background(), e, 1, Checker(ps, false))
		if p == nil {
			t.Fatalf("%s: not planned: %v", k.Name, problems)
		}
		cells := p.Cells
		for _, s := range p.Skipped { // a host without postgresql skips the cell; it builds still
			cells = append(cells, s.Cell)
		}
		if len(cells) == 0 {
			t.Fatalf("%s: no cell", k.Name)
		}
		w, err := Workload(e, cells[0])
		if err != nil {
			t.Errorf("%s: %v", k.Name, err)
			continue
		}
		built++
		if w.Traits().Remote != k.Remote {
			t.Errorf("%s: the row says remote %v, the workload %v", k.Name, k.Remote, w.Traits().Remote)
		}
	}
	if built != len(fields) {
		t.Errorf("%d measured kinds built, want %d", built, len(fields))
	}
}
