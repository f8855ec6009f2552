package fio

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
	for _, text := range []string{`{job: fsync-high}`, `{job: {preset: randread-4k, ioengine: libaio}, direct: false, size: 2GiB}`, `{size: 1MiB}`} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(text), &n); err != nil {
			t.Fatal(err)
		}
		o, ps := Own().YAML(n.Content[0], "workload", section.Common{Type: "fio", Threads: 1})
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
	if _, err := Own().JSON([]byte(`{"Job": "wal", "Depth": 2}`)); err == nil || !strings.Contains(err.Error(), "Depth") {
		t.Errorf("unknown field: %v", err)
	}
}

// TestSectionSweep: an iodepth sweep makes a preset a job map and copies a map, never writing
// into the spec's; another key is left to spec.
func TestSectionSweep(t *testing.T) {
	m := map[string]any{"preset": "wal"}
	for _, s := range []Section{{Job: "wal"}, {Job: m}} {
		o, mine := s.Sweep("workload.job.iodepth", "8")
		if job, _ := SectionOf(o).Job.(map[string]any); !mine || job["iodepth"] != 8 || job["preset"] != "wal" {
			t.Errorf("%v: %v %v", s, o, mine)
		}
	}
	if _, set := m["iodepth"]; set {
		t.Error("Sweep wrote into the section's job map")
	}
	if _, mine := (Section{}).Sweep("workload.rate", "5"); mine {
		t.Error("workload.rate is not fio's")
	}
}
