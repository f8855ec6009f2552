package spec

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

// metro is a kind of the test's own with a section of its own: beat, and pace, which the sweep
// key workload.rate sets (the kind applies the keys that set its fields).
type metro struct {
	Beat int     `yaml:"beat"`
	Pace float64 `yaml:"-"`
}

func (m metro) Sweep(key, v string) (Own, bool) {
	if key != "workload.rate" {
		return m, false
	}
	m.Pace, _ = strconv.ParseFloat(v, 64)
	return m, true
}

var metroKind = WorkloadKind{Name: "metro", Measured: true, Neighbour: true, Sweeps: []string{"workload.rate"},
	Own: &OwnKind{Fields: section.Fields(reflect.TypeOf(metro{})),
		YAML: func(n *yaml.Node, at string, w section.Common) (Own, []Problem) {
			m := metro{Beat: 1}
			ps := section.Decode(n, at, &m)
			if c := section.NewChecker(n, at); m.Beat < 1 {
				c.Add(at+".beat", "%d is out of range (valid: 1 or more)", m.Beat)
				ps = append(ps, c.Problems...)
			}
			return m, ps
		},
		JSON: func(b []byte) (Own, error) {
			var m metro
			return m, json.Unmarshal(b, &m)
		}}}

const metroSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: q
dbms: redis
workload: {type: metro, duration: 5s, beat: 4}
neighbours: {n: {workload: {type: metro}}}
matrix:
  platform: [native]
  neighbour: [none, n]
  workload.rate: [10, 20]
`

// TestOwnSection: a kind's own fields are decoded and checked by its row, applied by it when a
// sweep key sets one, refused on another kind, listed among the valid keys, and carried
// through JSON to be decoded by the same row.
func TestOwnSection(t *testing.T) {
	v := vocab
	v.Workloads = append(append([]WorkloadKind{}, vocab.Workloads...), metroKind)
	e, err := Parse([]byte(metroSpec), "m.yaml", v)
	if err != nil {
		t.Fatal(err)
	}
	if e.Workload.Own != (metro{Beat: 4}) || e.Neighbours["n"].Workload.Own != (metro{Beat: 1}) {
		t.Errorf("own sections %+v, %+v", e.Workload.Own, e.Neighbours["n"].Workload.Own)
	}
	if w := e.WorkloadFor("", map[string]string{"workload.rate": "20"}); w.Own != (metro{Beat: 4, Pace: 20}) || e.Workload.Own != (metro{Beat: 4}) {
		t.Errorf("the sweep key: %+v, the spec's %+v", w.Own, e.Workload.Own)
	}
	for w, want := range map[string]string{
		"type: metro, duration: 5s, beat: 0": "line 5: workload.beat: 0 is out of range (valid: 1 or more)",
		"type: metro, duration: 5s, beat: x": `line 5: workload.beat: "x" is text, but a whole number is expected here`,
		"type: metro, duration: 5s, bet: 4":  `line 5: workload.bet: unknown field "bet" (did you mean "beat"?); valid here: type, threads, duration, warmup, interval, mix,`,
		"type: ycsb, duration: 5s, beat: 4":  "line 5: workload.beat: applies to workload type metro only, but this workload is ycsb",
	} {
		text := strings.Replace(metroSpec, "type: metro, duration: 5s, beat: 4", w, 1)
		if _, err := Parse([]byte(text), "m.yaml", v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s", w, err, want)
		}
	}

	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var carried Experiment
	if err := json.Unmarshal(b, &carried); err != nil {
		t.Fatal(err)
	}
	if carried.Workload.Own != nil {
		t.Fatal("a section decoded before its kind's row read it")
	}
	if err := carried.DecodeOwn(v.Workloads); err != nil || carried.Workload.Own != (metro{Beat: 4}) || carried.Neighbours["n"].Workload.Own != (metro{Beat: 1}) {
		t.Errorf("carried: %+v, %+v, %v", carried.Workload.Own, carried.Neighbours["n"].Workload.Own, err)
	}
	if err := json.Unmarshal([]byte(`{"Type": "metro", "Bogus": 1}`), &Workload{}); err == nil {
		t.Error("an unknown field of a workload's JSON is accepted")
	}
	if err := (&Experiment{Workload: Workload{Type: "metro", ownJSON: []byte(`{"Beat": 2}`)}}).DecodeOwn(vocab.Workloads); err == nil {
		t.Error("a section of a kind this build lacks is accepted")
	}
}
