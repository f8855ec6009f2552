package section

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"gopkg.in/yaml.v3"
)

// A workload kind's own section is the part of a workload's mapping that is not spec.Workload's
// fields: the kind's row decodes and checks it (spec.WorkloadKind.Own), and spec keeps what it
// returned (spec.Workload.Own), knowing it only by the methods of Own. The types live here,
// below spec and the workload packages, so that a kind's package decodes its section without
// importing spec.

// Own is a kind's decoded section. Contract: Sweep never changes its receiver (a cell's
// workload is a copy of the spec's); the value marshals to JSON, and its kind's OwnKind.JSON
// reads that back (an agent's job carries the experiment as JSON).
type Own interface {
	// Sweep returns the section with sweep key set to value (validated by spec.Parse) and true
	// when the key sets one of the section's fields; false leaves the key to spec.
	Sweep(key, value string) (Own, bool)
}

// Common are a workload's fields that every kind shares (spec.Workload's), defaults applied:
// what a kind's own checks may read of the rest of its workload.
type Common struct {
	Type                       string
	Threads                    int
	Duration, Warmup, Interval time.Duration
}

// Stage is the point of spec's checks at which a kind's own check (OwnKind.Check) runs, so
// that problems on one line keep their order whichever package finds them.
type Stage int

const (
	// StageFields: beside the checks of the workload's fields (after its type, threads, duration,
	// interval; a neighbour's after its platform, storage, limits and type).
	StageFields Stage = iota
	// StageBounds: beside the upper bounds of sizes and counts.
	StageBounds
	// StageSafety: beside the checks that keep a spec from harming the host.
	StageSafety
)

// At is where a kind's own check runs: the stage, the workload's path ("workload",
// "workloads.<name>", "neighbours.<name>.workload"), whether it is a neighbour's, its common
// fields, and the lines of the spec's fields by dotted path (0 for a field the file does not
// give).
type At struct {
	Stage     Stage
	Path      string
	Neighbour bool
	Common    Common
	Line      func(field string) int
	// DBMS is the experiment's dbms ("" when the matrix varies it); Consistencies the
	// consistency levels of the databases that take one, by dbms (the vocabulary's).
	DBMS          string
	Consistencies map[string][]string
	// RecordBytes is the size of one record of the data set (fieldCount × fieldLength); 0 when
	// it is out of bounds, which spec reports.
	RecordBytes int64
}

// Facts are what spec, plan and runner read of a kind's section (OwnKind.Facts), as data:
// zero for a kind that has none of them.
type Facts struct {
	// Mix names the operation mix a cell runs when the matrix does not vary mix.
	Mix string
	// Consistency is the consistency level of every operation ("": the database's default),
	// which the topology checks against the replication factor.
	Consistency string
	// Operations is the operation count that ends the measurement (0: the duration does).
	Operations int64
}

// Problem is one problem of a check at a, on field's line.
func (a At) Problem(field, msg string) Problem {
	return Problem{Line: a.Line(field), Field: field, Message: msg}
}

// OwnKind decodes the own section of one kind.
type OwnKind struct {
	// Fields are the section's keys, in the order messages list them (Fields of its type). A
	// workload of another kind that sets one is refused, naming this kind.
	Fields []string
	// YAML decodes the section: n is a mapping of the keys of Fields the workload gives (nil:
	// it gives none), at path at; w is the workload's common fields. Its problems are this
	// package's (line, dotted field, did you mean, what is valid), all at once; a type error
	// may leave its field empty for spec to name by its line and value.
	YAML func(n *yaml.Node, at string, w Common) (Own, []Problem)
	// Check, when set, checks the decoded section at each stage of spec's checks (At.Stage);
	// spec calls it for every workload of the kind whose section decoded.
	Check func(o Own, a At) []Problem
	// CheckSweep, when set, checks that sweep key (one the kind's row lists) can vary the
	// section o of the workload at path: a message, or "" when it can.
	CheckSweep func(o Own, path, key string) string
	// Facts, when set, returns what spec, plan and runner read of a decoded section.
	Facts func(o Own) Facts
	// JSON reads what an Own of the kind marshalled to.
	JSON func(data []byte) (Own, error)
}

// DecodeKnown decodes n (a kind's own keys, which are all fields of v, a pointer to a struct
// with yaml tags) into v. Its problems are yaml's type errors in the spec's words with the
// field left empty: spec names it by the line and the value, as it does for its own fields.
// A nil n leaves v alone.
func DecodeKnown(n *yaml.Node, v any) []Problem {
	if n == nil {
		return nil
	}
	err := n.Decode(v)
	if err == nil {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return []Problem{{Line: n.Line, Message: err.Error()}}
	}
	ps := make([]Problem, 0, len(te.Errors))
	for _, msg := range te.Errors {
		ps = append(ps, TypeProblem(msg))
	}
	return ps
}

// DecodeJSON reads what an Own marshalled to into v, refusing unknown fields (as spec does the
// rest of a workload's JSON).
func DecodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// FieldsOf are the keys of a kind's section type T, in the order messages list them
// (OwnKind.Fields).
func FieldsOf[T Own]() []string { return Fields(reflect.TypeFor[T]()) }

// JSONOf reads back what a section of type T marshalled to (OwnKind.JSON): unknown fields are
// refused.
func JSONOf[T Own](data []byte) (Own, error) {
	var s T
	if err := DecodeJSON(data, &s); err != nil {
		return s, err
	}
	return s, nil
}

// As is o as the section type T its kind decoded, the zero T when o is another kind's (a
// kind's SectionOf).
func As[T Own](o Own) T {
	s, _ := o.(T)
	return s
}
