package sysbench

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

// Section is sysbench's own section of a spec workload (section.OwnKind): the test, the
// tables and their rows, and the open loop's rate.
type Section struct {
	Test      string  `yaml:"test"`
	Tables    int     `yaml:"tables"`
	TableSize int64   `yaml:"tableSize"`
	Rate      float64 `yaml:"rate"`
}

// ownKind is the row's decoder of Section (Own).
var ownKind = section.OwnKind{Fields: section.FieldsOf[Section](), YAML: decodeSection,
	Check: checkSection, JSON: section.JSONOf[Section]}

// Own decodes and checks sysbench's own section of a workload; the same value every call.
func Own() *section.OwnKind { return &ownKind }

// SectionOf is the section a workload's kind sysbench decoded (zero when o is not one).
func SectionOf(o section.Own) Section { return section.As[Section](o) }

// Sweep sets the rate (workload.rate) or the rows of each table (workload.tableSize).
func (s Section) Sweep(key, v string) (section.Own, bool) {
	switch key {
	case "workload.rate":
		s.Rate, _ = strconv.ParseFloat(v, 64)
	case "workload.tableSize":
		s.TableSize, _ = strconv.ParseInt(v, 10, 64)
	default:
		return s, false
	}
	return s, true
}

func decodeSection(n *yaml.Node, _ string, _ section.Common) (section.Own, []section.Problem) {
	var s Section
	return s, section.DecodeKnown(n, &s)
}

// checkSection: the test is one of Tests; the rate is a whole number of transactions/s; the
// rate, the tables and their rows are bounded.
func checkSection(o section.Own, a section.At) []section.Problem {
	s := SectionOf(o)
	var ps []section.Problem
	add := func(field, format string, v ...any) {
		ps = append(ps, a.Problem(a.Path+"."+field, fmt.Sprintf(format, v...)))
	}
	switch a.Stage {
	case section.StageFields:
		if msg := section.NotOneOf(s.Test, Tests); msg != "" {
			add("test", "%s", msg)
		}
		if s.Rate < 0 || s.Rate != float64(int64(s.Rate)) {
			add("rate", "%g is not valid (0 = closed loop; a whole number of transactions/s)", s.Rate)
		}
	case section.StageBounds:
		if s.Rate > section.MaxRate {
			add("rate", "%g is too large (valid: 0 for a closed loop, or 1 to %g transactions/s)", s.Rate, section.MaxRate)
		}
		if s.Tables < 0 || s.Tables > section.MaxTables {
			add("tables", "%d is out of range (valid: 0 for the default 1, or 1 to %d)", s.Tables, section.MaxTables)
		}
		if s.TableSize < 0 || s.TableSize > section.MaxTableSize {
			add("tableSize", "%d is out of range (valid: 0 for records / tables, or 1 to %d rows, sysbench's 32-bit ids)", s.TableSize, int64(section.MaxTableSize))
		}
	}
	return ps
}
