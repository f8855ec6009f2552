package report

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/workload"
)

// Every way steady-state detection can be not applied is counted, each with its own reason:
// schema 1 counted runs by the wording of a fact and missed the failed cut, and gave every
// uncounted run the reason "fewer than N intervals".
func TestSteadyNotAppliedByReason(t *testing.T) {
	dir := t.TempDir()
	st, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetMeta(map[string]string{"experiment_id": "s-0000000a", "name": "s"}); err != nil {
		t.Fatal(err)
	}
	cell := "platform=native"
	if err := st.PutCells([]results.CellRecord{{ID: cell, Params: map[string]string{"platform": "native"}, BaselineID: cell}}); err != nil {
		t.Fatal(err)
	}
	for i, s := range []results.Steady{results.SteadyTooShort, results.SteadyNoMinimum, results.SteadyCutFailed,
		results.SteadyCut, results.SteadySteady, results.SteadyNoMinimum} {
		res := &workload.Result{Measured: time.Second, Ops: []workload.OpSummary{{Op: "read", Series: "latency", Count: 100, Throughput: 100}}}
		rec := &results.RunRecord{ID: fmt.Sprintf("%s#%d", cell, i+1), CellID: cell, Rep: i + 1, Seq: i + 1, Status: "ok",
			Started: fixStart, Ended: fixStart, Result: res, Steady: s}
		if err := st.PutRun(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Build(st)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Cell(cell).SteadyNotApplied
	want := map[results.Steady]int{results.SteadyTooShort: 1, results.SteadyNoMinimum: 2, results.SteadyCutFailed: 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("not applied %v, want %v", got, want)
	}
	var b bytes.Buffer
	writeTextWindow(&b, r)
	if !strings.Contains(b.String(), "not applied in its 4 runs (1: fewer than 20 intervals; 2: MSER found no point to cut at; 1: the cut MSER chose could not be made)") {
		t.Errorf("window section:\n%s", b.String())
	}
}
