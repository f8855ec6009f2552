package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

// A workload kind's own section is the part of a workload's mapping that is not Workload's
// fields: the kind's row decodes and checks it (WorkloadKind.Own), as a platform does its
// top-level section, and spec keeps what it returned (Workload.Own), knowing it only by the
// methods of Own. A kind with fields of its own is so its folder and its row; spec gains no
// field.

// Own is a kind's decoded section; OwnKind decodes and checks one kind's (package section,
// which the kinds' packages import without importing spec).
type (
	Own     = section.Own
	OwnKind = section.OwnKind
)

// decodeOwn hands each workload's keys that Workload has no field for to its kind's decoder
// (WorkloadKind.Own). A key no kind takes is an unknown field; a key another kind takes is
// left to foreignFields, which names the kinds that take it. Unknown fields beyond
// MaxProblems are counted, not made (each costs a "did you mean" search), as Parse does with
// yaml's.
func (e *Experiment) decodeOwn() ([]Problem, int) {
	d := ownDecoder{e: e, others: e.vocab.kindFields(), valid: e.vocab.workloadFields()}
	ws := e.allWorkloads()
	for _, at := range sortedKeys(ws) {
		d.workload(at, ws[at])
	}
	return d.ps, d.more
}

type ownDecoder struct {
	e             *Experiment
	others, valid []string // the fields some kind takes; the keys a workload may have
	ps            []Problem
	more          int
}

// allWorkloads are the experiment's workloads by path, the neighbours' included.
func (e *Experiment) allWorkloads() map[string]*Workload {
	ws := map[string]*Workload{"workload": &e.Workload}
	for n, w := range e.Workloads {
		if w != nil {
			ws["workloads."+n] = w
		}
	}
	for n, nb := range e.Neighbours {
		if nb != nil {
			ws["neighbours."+n+".workload"] = &nb.Workload
		}
	}
	return ws
}

func (d *ownDecoder) workload(at string, w *Workload) {
	e := d.e
	own := e.vocab.workloadKind(w.Type).Own
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	type key struct {
		name string
		line int
	}
	keys := make([]key, 0, len(w.Rest))
	for k := range w.Rest {
		keys = append(keys, key{k, e.lines[at+"."+k]})
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].line != keys[j].line {
			return keys[i].line < keys[j].line
		}
		return keys[i].name < keys[j].name
	})
	for _, k := range keys {
		switch {
		case own != nil && contains(own.Fields, k.name):
			v := w.Rest[k.name]
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k.name, Line: k.line}, &v)
		case contains(d.others, k.name): // another kind's field: foreignFields names it
		case len(d.ps) >= MaxProblems:
			d.more++
		default:
			// The path of the message is "workload" wherever the workload is, as yaml's own
			// unknown fields of Workload are named (rewrite).
			d.ps = append(d.ps, section.Unknown(k.line, "workload", k.name, d.valid))
		}
	}
	if own == nil {
		return
	}
	if len(n.Content) == 0 {
		n = nil
	}
	o, p := own.YAML(n, at, w.common())
	w.Own, d.ps = o, append(d.ps, p...)
}

// workloadFields are the keys a workload's mapping may have: Workload's fields, then the own
// sections' of the kinds, in the vocabulary's order.
func (v Vocabulary) workloadFields() []string {
	out := section.Fields(reflect.TypeOf(Workload{}))
	for _, k := range v.Workloads {
		if k.Own == nil {
			continue
		}
		for _, f := range k.Own.Fields {
			if !contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// plainWorkload is Workload without its JSON methods.
type plainWorkload Workload

// workloadJSON is a Workload as JSON carries it: its kind's own section as the JSON the value
// marshals to.
type workloadJSON struct {
	plainWorkload
	Own json.RawMessage `json:",omitempty"`
}

// MarshalJSON writes w with its own section (Own), which the reader decodes through its
// kind's row (DecodeOwn).
func (w Workload) MarshalJSON() ([]byte, error) {
	j := workloadJSON{plainWorkload: plainWorkload(w)}
	if w.Own != nil {
		b, err := json.Marshal(w.Own)
		if err != nil {
			return nil, fmt.Errorf("workload %s: its own section: %w", w.Type, err)
		}
		j.Own = b
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote, unknown fields refused; the own section stays
// undecoded until DecodeOwn.
func (w *Workload) UnmarshalJSON(data []byte) error {
	var j workloadJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*w = Workload(j.plainWorkload)
	w.ownJSON = j.Own
	return nil
}

// DecodeOwn decodes the own sections of an experiment read from JSON (an agent's job) through
// the rows of kinds; an experiment Parse read has them already, and is left alone.
func (e *Experiment) DecodeOwn(kinds []WorkloadKind) error {
	v := Vocabulary{Workloads: kinds}
	ws := e.allWorkloads()
	for _, at := range sortedKeys(ws) {
		w := ws[at]
		if w.Own != nil || w.ownJSON == nil {
			continue
		}
		own := v.workloadKind(w.Type).Own
		if own == nil {
			return fmt.Errorf("%s: workload type %q has no section of its own in this build", at, w.Type)
		}
		o, err := own.JSON(w.ownJSON)
		if err != nil {
			return fmt.Errorf("%s: its %s section: %w", at, w.Type, err)
		}
		w.Own, w.ownJSON = o, nil
	}
	return nil
}

// common are w's fields that every kind shares.
func (w *Workload) common() section.Common {
	return section.Common{Type: w.Type, Threads: w.Threads, Duration: w.Duration.D(), Warmup: w.Warmup.D(), Interval: w.Interval.D()}
}

// ownCheck runs the own check of w's kind (OwnKind.Check) at stage, for the workload at path.
func (c *checker) ownCheck(stage section.Stage, path string, w *Workload, neighbour bool) {
	own := c.e.vocab.workloadKind(w.Type).Own
	if own == nil || own.Check == nil || w.Own == nil {
		return
	}
	a := section.At{Stage: stage, Path: path, Neighbour: neighbour, Common: w.common(), Line: c.e.Line,
		DBMS: c.e.DBMS, Consistencies: c.e.vocab.Consistencies}
	if d := c.e.Dataset; int64(d.FieldCount)*int64(d.FieldLength) <= MaxRecordBytes {
		a.RecordBytes = int64(d.FieldCount) * int64(d.FieldLength)
	}
	for _, p := range own.Check(w.Own, a) {
		c.put(p)
	}
}

// FactsOf is what w's kind says of its section (OwnKind.Facts): the mix, the consistency level,
// the operation count; zero for a kind that says none, or an experiment read without a
// vocabulary.
func (e *Experiment) FactsOf(w *Workload) section.Facts {
	own := e.vocab.workloadKind(w.Type).Own
	if own == nil || own.Facts == nil || w.Own == nil {
		return section.Facts{}
	}
	return own.Facts(w.Own)
}
