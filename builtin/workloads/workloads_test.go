package workloads

import (
	"slices"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload/ycsb"
)

// TestTable: the spec's words follow the rows (a kind is measured when it builds a measured
// workload, a neighbour's when it builds one), in the table's order, and a kind the table lacks
// is refused naming the ones it has.
func TestTable(t *testing.T) {
	rows := All()
	v := Vocabulary(rows)
	var names []string
	for i, k := range v {
		if k.Name != rows[i].Name || k.Measured != (rows[i].Build != nil) || k.Neighbour != (rows[i].Neighbour != nil) {
			t.Errorf("row %d: %+v from %+v", i, k, rows[i])
		}
		names = append(names, k.Name)
	}
	if got := strings.Join(names, ","); got != "ycsb,sysbench,fio,stress" {
		t.Errorf("kinds %s", got)
	}
	_, err := Find(rows, "fio2", func(k Kind) bool { return k.Neighbour != nil }, "cannot run as a neighbour")
	if err == nil || err.Error() != `workload type "fio2" cannot run as a neighbour (valid: fio, stress)` {
		t.Errorf("got %v", err)
	}
	if k, err := Find(rows, "sysbench", func(k Kind) bool { return k.Build != nil }, "is not built in"); err != nil || k.Name != "sysbench" {
		t.Errorf("sysbench: %v", err)
	}
}

// TestMixes: the matrix key mix takes the values ycsb's own section takes (spec.Mixes, which
// spec cannot take from workload/ycsb, is ycsb.MixNames), and each named one is a mix of the
// generator's.
func TestMixes(t *testing.T) {
	if !slices.Equal(spec.Mixes, ycsb.MixNames) {
		t.Errorf("spec.Mixes %v, ycsb.MixNames %v", spec.Mixes, ycsb.MixNames)
	}
	for _, m := range ycsb.MixNames {
		if _, ok := ycsb.Mixes[m]; !ok && m != "custom" {
			t.Errorf("mix %q is not one of the generator's", m)
		}
	}
}
