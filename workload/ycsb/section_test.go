package ycsb

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

func decode(t *testing.T, text string) section.Own {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		t.Fatal(err)
	}
	o, ps := Own().YAML(n.Content[0], "workload", section.Common{Type: "ycsb", Threads: 8})
	if len(ps) > 0 {
		t.Fatalf("%s: %v", text, ps)
	}
	return o
}

// TestSectionJSON: what a decoded section marshals to, the row's JSON reads back (an agent's
// job carries the experiment as JSON), a swept read share included, and an unknown field is
// refused.
func TestSectionJSON(t *testing.T) {
	for _, text := range []string{`{mix: b}`, `{proportions: {read: 0.9, update: 0.1}, readAllFields: false, keyOrder: ordered}`,
		`{mix: a, requestDistribution: latest, targetRate: 500, operationCount: 1000, writeAllFields: true,
		  scanLengthMax: 10, loadThreads: 2, loadBatch: 50, consistency: QUORUM}`} {
		o := decode(t, text)
		swept, _ := o.Sweep("workload.proportions.read", "0.25")
		for _, o := range []section.Own{o, swept} {
			b, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Own().JSON(b)
			if err != nil || !reflect.DeepEqual(back, o) {
				t.Errorf("%s: %s read back as %#v, %v; want %#v", text, b, back, err, o)
			}
		}
	}
	if _, err := Own().JSON([]byte(`{"Mix": "a", "Records": 2}`)); err == nil || !strings.Contains(err.Error(), "Records") {
		t.Errorf("unknown field: %v", err)
	}
}

// TestSectionDefaults: an empty mix is a, or custom when proportions are given; the facts say
// the mix, the consistency level and the operation count.
func TestSectionDefaults(t *testing.T) {
	for text, mix := range map[string]string{`{}`: "a", `{proportions: {read: 1}}`: "custom", `{mix: e}`: "e"} {
		if got := SectionOf(decode(t, text)).Mix; got != mix {
			t.Errorf("%s: mix %q, want %q", text, got, mix)
		}
	}
	if o, _ := Own().YAML(nil, "workload", section.Common{Type: "ycsb"}); SectionOf(o).Mix != "a" {
		t.Errorf("no own keys: %+v", o)
	}
	f := Own().Facts(decode(t, `{mix: c, consistency: ALL, operationCount: 7}`))
	if f != (section.Facts{Mix: "c", Consistency: "ALL", Operations: 7}) {
		t.Errorf("facts: %+v", f)
	}
}

// TestSectionSweep: the three sweep keys set the section's fields, on a copy; another key is
// left to spec.
func TestSectionSweep(t *testing.T) {
	s := Section{Mix: "a", TargetRate: 10}
	if o, mine := s.Sweep("workload.targetRate", "50"); !mine || SectionOf(o).TargetRate != 50 {
		t.Errorf("targetRate: %+v %v", o, mine)
	}
	if o, mine := s.Sweep("workload.proportions.read", "0.5"); !mine || *SectionOf(o).ReadProportion != 0.5 {
		t.Errorf("proportions.read: %+v %v", o, mine)
	}
	if o, mine := s.Sweep("workload.requestDistribution", "zipfian"); !mine || SectionOf(o).RequestDistribution != "zipfian" {
		t.Errorf("requestDistribution: %+v %v", o, mine)
	}
	if _, mine := s.Sweep("workload.rate", "5"); mine || s.TargetRate != 10 || s.ReadProportion != nil {
		t.Error("workload.rate is not ycsb's, and the receiver stays")
	}
}

// TestSectionCheck: the consistency level is checked against the experiment's dbms (At.DBMS,
// At.Consistencies) only when given, and the load batch's bytes against the record size
// (At.RecordBytes).
func TestSectionCheck(t *testing.T) {
	lines := map[string]int{"workload.consistency": 4, "workload.loadBatch": 5}
	a := section.At{Stage: section.StageFields, Path: "workload", Line: func(f string) int { return lines[f] },
		DBMS: "redis", Consistencies: map[string][]string{"cassandra": {"ONE", "QUORUM"}}}
	ps := checkSection(Section{Mix: "a", Consistency: "QUORUM"}, a)
	if len(ps) != 1 || ps[0].Line != 4 || !strings.Contains(ps[0].Message, "applies to dbms cassandra only, but this experiment runs redis") {
		t.Errorf("consistency on redis: %v", ps)
	}
	a.DBMS = "cassandra"
	if ps := checkSection(Section{Mix: "a", Consistency: "QUORUM"}, a); len(ps) != 0 {
		t.Errorf("QUORUM on cassandra: %v", ps)
	}
	delete(lines, "workload.consistency")
	if ps := checkSection(Section{Mix: "a", Consistency: "bogus"}, a); len(ps) != 0 {
		t.Errorf("a consistency the file does not give is not checked: %v", ps)
	}
	a.Stage, a.RecordBytes = section.StageBounds, 4<<20
	ps = checkSection(Section{Mix: "a"}, a)
	if len(ps) != 1 || ps[0].Field != "workload.loadBatch" || !strings.Contains(ps[0].Message, "100 records of 4MiB") {
		t.Errorf("default batch of 4 MiB records: %v", ps)
	}
	if ps := checkSection(Section{Mix: "a", LoadBatch: 64}, a); len(ps) != 0 {
		t.Errorf("64 records of 4 MiB: %v", ps)
	}
}
