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

// Own is a kind's decoded section. Contract: Sweep never changes its receiver (a cell's
// workload is a copy of the spec's); the value marshals to JSON, and its kind's OwnKind.JSON
// reads that back (an agent's job carries the experiment as JSON).
type Own interface {
	// Sweep returns the section with sweep key set to value (validated by Parse) and true when
	// the key sets one of the section's fields; false leaves the key to spec.
	Sweep(key, value string) (Own, bool)
}

// OwnKind decodes the own section of one kind.
type OwnKind struct {
	// Fields are the section's keys, in the order messages list them (section.Fields of its
	// type). A workload of another kind that sets one is refused, naming this kind.
	Fields []string
	// YAML decodes and checks the section: n is a mapping of the keys of Fields the workload
	// gives (nil: it gives none), at path at ("workload", "workloads.<name>",
	// "neighbours.<name>.workload"); w is the workload's common fields, defaults applied. Its
	// problems are package section's (line, dotted field, did you mean, what is valid), all
	// at once.
	YAML func(n *yaml.Node, at string, w Workload) (Own, []Problem)
	// JSON reads what an Own of the kind marshalled to.
	JSON func(data []byte) (Own, error)
}

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
	common := *w
	common.Own, common.Rest = nil, nil
	o, p := own.YAML(n, at, common)
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
