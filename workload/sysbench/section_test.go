package sysbench

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

// TestSectionJSON: what a decoded section marshals to, the row's JSON reads back (an agent's
// job carries the experiment as JSON), and an unknown field is refused.
func TestSectionJSON(t *testing.T) {
	for _, text := range []string{`{test: oltp_read_only}`, `{test: oltp_insert, tables: 4, tableSize: 10000, rate: 200}`} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(text), &n); err != nil {
			t.Fatal(err)
		}
		o, ps := Own().YAML(n.Content[0], "workload", section.Common{Type: "sysbench", Threads: 8})
		if len(ps) > 0 {
			t.Fatalf("%s: %v", text, ps)
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Own().JSON(b)
		if err != nil || !reflect.DeepEqual(back, o) {
			t.Errorf("%s: %s read back as %#v, %v; want %#v", text, b, back, err, o)
		}
	}
	if _, err := Own().JSON([]byte(`{"Test": "oltp_insert", "Events": 2}`)); err == nil || !strings.Contains(err.Error(), "Events") {
		t.Errorf("unknown field: %v", err)
	}
}

// TestSectionSweep: workload.rate and workload.tableSize set the section's fields, on a copy;
// another key is left to spec.
func TestSectionSweep(t *testing.T) {
	s := Section{Test: "oltp_read_only", Rate: 10, TableSize: 100}
	if o, mine := s.Sweep("workload.rate", "50"); !mine || o != (Section{Test: "oltp_read_only", Rate: 50, TableSize: 100}) {
		t.Errorf("rate: %+v %v", o, mine)
	}
	if o, mine := s.Sweep("workload.tableSize", "5000"); !mine || o != (Section{Test: "oltp_read_only", Rate: 10, TableSize: 5000}) {
		t.Errorf("tableSize: %+v %v", o, mine)
	}
	if _, mine := s.Sweep("workload.targetRate", "5"); mine || s.Rate != 10 {
		t.Error("workload.targetRate is not sysbench's, and the receiver stays")
	}
}
