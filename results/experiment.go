package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec"
)

// Experiment is the stored experiment: who it is, the spec it ran and the host it ran on, and
// the spec's values that decide how its runs are analysed, decoded once here so that no
// reader parses the spec text again.
type Experiment struct {
	ID, Name, Seed, CreatedAt, Version string
	// Spec is the experiment file as it was run (YAML).
	Spec string
	// Env is the host environment (meta "env"); values that were not JSON strings are kept as
	// their JSON text.
	Env map[string]string

	// Read from Spec leniently: a spec this version no longer validates still yields what it
	// says; an unreadable one the zero values.
	DBMS, Workload   string              // the spec's dbms and its workload's type
	Order            string              // the spec's order: "duet" pairs runs that ran together
	Pairing          string              // the spec's pairing, defaulted by its order: none, rounds or duets
	EmulatedVerdicts bool                // emulatedVerdicts: true (verdicts on emulated boxes)
	SteadyStateOff   bool                // steadyState: off
	MatrixOrder      map[string][]string // each matrix key's values in the spec's order

	// Read from Env, where every schema keeps them: the CPUs placement.client pinned the client
	// to ("" when it did not), and the host's CPU count (0 when not recorded).
	ClientCPUs string
	NumCPU     int
}

// Experiment reads the experiment's record. An experiment id that fails ValidExperimentID
// reads as "" (a report still shows the rest); an unreadable env is an error.
func (s *Store) Experiment() (Experiment, error) {
	if _, err := s.Meta("name"); err != nil {
		return Experiment{}, fmt.Errorf("meta: %w", err)
	}
	get := func(key string) string {
		v, _ := s.Meta(key)
		return v
	}
	e := Experiment{ID: cut(get("experiment_id"), MaxName), Name: cut(get("name"), MaxName), Seed: cut(get("seed"), MaxName),
		CreatedAt: cut(get("created_at"), MaxName), Version: cut(get("boxbench_version"), MaxName), Spec: get("spec"), Env: map[string]string{}}
	if env := get("env"); env != "" {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(env), &raw); err != nil {
			return Experiment{}, fmt.Errorf("meta env: %w", err)
		}
		for k, v := range raw {
			var str string
			if json.Unmarshal(v, &str) == nil {
				e.Env[k] = str
			} else {
				e.Env[k] = string(v)
			}
		}
	}
	e.Env = cutMap(e.Env)
	e.ClientCPUs = e.Env["client_cpus"]
	e.NumCPU, _ = strconv.Atoi(e.Env["num_cpu"])
	e.readSpec()
	e.Spec = cut(e.Spec, spec.MaxSpecBytes) // shown in the HTML page; one that long was not decoded
	return e, nil
}

// SpecTree parses a stored spec under the spec's own shape rules (spec/shape.go), for a
// decode that stays linear: yaml.v3 compares every pair of a mapping's keys as it decodes, and
// a results file from elsewhere may hold a spec of 100,000 keys. false: the spec is over
// spec.MaxSpecBytes, not YAML or out of shape, and reads as unreadable. Decode from the tree.
func SpecTree(text string) (*yaml.Node, bool) {
	var root yaml.Node
	if len(text) > spec.MaxSpecBytes || yaml.Unmarshal([]byte(text), &root) != nil || len(spec.ShapeProblems(&root)) > 0 {
		return nil, false
	}
	return &root, true
}

// readSpec decodes the fields of the spec that analysis needs. The matrix is decoded on its
// own: its decoder's errors abort a decode, and must not take the scalars with them.
func (e *Experiment) readSpec() {
	var doc struct {
		DBMS     string `yaml:"dbms"`
		Workload struct {
			Type string `yaml:"type"`
		} `yaml:"workload"`
		Order            string `yaml:"order"`
		EmulatedVerdicts bool   `yaml:"emulatedVerdicts"`
		SteadyState      string `yaml:"steadyState"`
		Pairing          string `yaml:"pairing"`
	}
	root, ok := SpecTree(e.Spec)
	if !ok {
		e.Pairing = spec.DefaultPairing("")
		return
	}
	// A type error leaves the field it concerns at its zero value and decodes the others.
	var te *yaml.TypeError
	if err := root.Decode(&doc); err == nil || errors.As(err, &te) {
		e.Order, e.EmulatedVerdicts, e.SteadyStateOff = doc.Order, doc.EmulatedVerdicts, doc.SteadyState == "off"
		e.Pairing, e.DBMS, e.Workload = doc.Pairing, doc.DBMS, doc.Workload.Type
	}
	if e.Pairing == "" {
		e.Pairing = spec.DefaultPairing(e.Order)
	}
	var m struct {
		Matrix spec.Matrix `yaml:"matrix"`
	}
	if root.Decode(&m) == nil {
		e.MatrixOrder = map[string][]string{}
		for _, d := range append(m.Matrix.Dims, m.Matrix.Zip...) {
			e.MatrixOrder[d.Key] = d.Values
		}
	}
}
