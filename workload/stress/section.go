package stress

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

// Section is stress-ng's own section of a neighbour's workload (section.OwnKind): the hog
// workers and the memory each vm worker touches.
type Section struct {
	CPU     int           `yaml:"cpu"`     // CPU hog workers
	VM      int           `yaml:"vm"`      // memory-bandwidth hog workers
	VMBytes section.Bytes `yaml:"vmBytes"` // memory each vm worker touches
}

// ownKind is the row's decoder of Section (Own).
var ownKind = section.OwnKind{Fields: section.FieldsOf[Section](), YAML: decodeSection,
	Check: checkSection, JSON: section.JSONOf[Section]}

// Own decodes and checks stress's own section of a workload; the same value every call.
func Own() *section.OwnKind { return &ownKind }

// SectionOf is the section a workload's kind stress decoded (zero when o is not one).
func SectionOf(o section.Own) Section { return section.As[Section](o) }

// Config is the configuration of a neighbour running the section for window.
func (s Section) Config(window time.Duration) Config {
	return Config{CPU: s.CPU, VM: s.VM, VMBytes: int64(s.VMBytes), Duration: window}
}

// Sweep: no sweep key sets a field of the section.
func (s Section) Sweep(string, string) (section.Own, bool) { return s, false }

func decodeSection(n *yaml.Node, _ string, _ section.Common) (section.Own, []section.Problem) {
	var s Section
	return s, section.DecodeKnown(n, &s)
}

// checkSection: a hog of some kind is asked for; the worker counts and sizes are bounded.
func checkSection(o section.Own, a section.At) []section.Problem {
	s := SectionOf(o)
	var ps []section.Problem
	switch a.Stage {
	case section.StageFields:
		if s.CPU <= 0 && s.VM <= 0 {
			ps = append(ps, a.Problem(a.Path, fmt.Sprintf("a %s neighbour needs cpu: N (CPU hog workers) or vm: N (memory-bandwidth hog workers)", a.Common.Type)))
		}
	case section.StageBounds:
		for _, f := range []struct {
			name string
			v    int
		}{{"cpu", s.CPU}, {"vm", s.VM}} {
			if f.v < 0 || f.v > section.MaxThreads {
				ps = append(ps, a.Problem(a.Path+"."+f.name, fmt.Sprintf("%d is out of range (valid: 0 to %d workers)", f.v, section.MaxThreads)))
			}
		}
		if msg := section.CheckSize(s.VMBytes); msg != "" {
			ps = append(ps, a.Problem(a.Path+".vmBytes", msg))
		}
	}
	return ps
}
