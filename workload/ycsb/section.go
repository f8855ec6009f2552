package ycsb

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

// Section is ycsb's own section of a spec workload (section.OwnKind): the mix and its
// proportions, the request distribution, the open loop's rate, the operation count, the
// fields read and written, the scan length, the key order, the load's threads and batch, and
// the consistency level.
type Section struct {
	Mix                 string             `yaml:"mix"`
	Proportions         map[string]float64 `yaml:"proportions"`
	RequestDistribution string             `yaml:"requestDistribution"`
	TargetRate          float64            `yaml:"targetRate"`
	OperationCount      int64              `yaml:"operationCount"`
	ReadAllFields       *bool              `yaml:"readAllFields"`
	WriteAllFields      *bool              `yaml:"writeAllFields"`
	ScanLengthMax       int                `yaml:"scanLengthMax"`
	KeyOrder            string             `yaml:"keyOrder"`
	LoadThreads         int                `yaml:"loadThreads"`
	LoadBatch           int                `yaml:"loadBatch"`
	// Consistency is the CQL consistency level of every operation of dbms cassandra (default
	// ONE, as in YCSB's Cassandra binding); the other databases' cells of a matrix ignore it.
	Consistency string `yaml:"consistency"`
	// ReadProportion is set only by the sweep key workload.proportions.read (Sweep): the read
	// share, the mix's other operations keeping their ratios.
	ReadProportion *float64 `yaml:"-"`
}

const (
	// MaxLoadBatch bounds the records per insert round trip.
	MaxLoadBatch = 10000
	// DefaultLoadBatch is the batch when loadBatch is 0 (DefaultConfig's).
	DefaultLoadBatch = 100
	// MaxBatchBytes bounds one load batch (loadBatch records, held in one write buffer).
	MaxBatchBytes = 256 << 20
	// MaxOperations bounds operationCount; MaxScanLength the scan length.
	MaxOperations = 1 << 40
	MaxScanLength = 100000
)

// MixNames are the values of mix, in the order messages list them: the named mixes (Mixes),
// then custom, which takes proportions.
var MixNames = []string{"a", "b", "c", "d", "e", "f", "write-heavy", "read-heavy", "custom"}

// ownKind is the row's decoder of Section (Own).
var ownKind = section.OwnKind{Fields: section.FieldsOf[Section](), YAML: decodeSection,
	Check: checkSection, Facts: facts, JSON: section.JSONOf[Section]}

// Own decodes and checks ycsb's own section of a workload; the same value every call.
func Own() *section.OwnKind { return &ownKind }

// SectionOf is the section a workload's kind ycsb decoded (zero when o is not one).
func SectionOf(o section.Own) Section { return section.As[Section](o) }

// Sweep sets the open loop's rate (workload.targetRate), the read share
// (workload.proportions.read) or the request distribution (workload.requestDistribution).
func (s Section) Sweep(key, v string) (section.Own, bool) {
	switch key {
	case "workload.targetRate":
		s.TargetRate, _ = strconv.ParseFloat(v, 64)
	case "workload.proportions.read":
		f, _ := strconv.ParseFloat(v, 64)
		s.ReadProportion = &f
	case "workload.requestDistribution":
		s.RequestDistribution = v
	default:
		return s, false
	}
	return s, true
}

// facts: the mix plan names a cell by, the consistency level the topology checks, and the
// operation count that stands in for a duration.
func facts(o section.Own) section.Facts {
	s := SectionOf(o)
	return section.Facts{Mix: s.Mix, Consistency: s.Consistency, Operations: s.OperationCount}
}

// decodeSection decodes the section; an empty mix is a (YCSB's core workload a), or custom
// when proportions are given.
func decodeSection(n *yaml.Node, _ string, _ section.Common) (section.Own, []section.Problem) {
	var s Section
	ps := section.DecodeKnown(n, &s)
	if s.Mix == "" {
		s.Mix = "a"
		if len(s.Proportions) > 0 {
			s.Mix = "custom"
		}
	}
	return s, ps
}

// checkSection: the mix is one of MixNames, custom with proportions; the rate is not
// negative; a consistency level given is one the experiment's dbms takes; the rate, the load's
// threads and batch, the operation count and the scan length are bounded.
func checkSection(o section.Own, a section.At) []section.Problem {
	s := SectionOf(o)
	var ps []section.Problem
	add := func(field, format string, v ...any) {
		ps = append(ps, a.Problem(a.Path+"."+field, fmt.Sprintf(format, v...)))
	}
	switch a.Stage {
	case section.StageFields:
		if msg := section.NotOneOf(s.Mix, MixNames); msg != "" {
			add("mix", "%s", msg)
		}
		if s.Mix == "custom" && len(s.Proportions) == 0 {
			add("proportions", "mix custom needs proportions, e.g. {read: 0.9, update: 0.1}")
		}
		if s.TargetRate < 0 {
			add("targetRate", "%g is negative (0 = closed loop; >0 = ops/s)", s.TargetRate)
		}
		if a.Line(a.Path+".consistency") != 0 {
			ps = append(ps, checkConsistency(s.Consistency, a)...)
		}
	case section.StageBounds:
		if s.TargetRate != 0 && (s.TargetRate < section.MinRate || s.TargetRate > section.MaxRate) {
			add("targetRate", "%g is out of range (valid: 0 for a closed loop, or %g to %g operations/s)", s.TargetRate, section.MinRate, section.MaxRate)
		}
		if s.LoadThreads < 0 || s.LoadThreads > section.MaxThreads {
			add("loadThreads", "%d is out of range (valid: 0 for the workload's threads, or 1 to %d)", s.LoadThreads, section.MaxThreads)
		}
		if msg := checkLoadBatch(s.LoadBatch, a.RecordBytes); msg != "" {
			add("loadBatch", "%s", msg)
		}
		if s.OperationCount < 0 || s.OperationCount > MaxOperations {
			add("operationCount", "%d is out of range (valid: 0 to %d)", s.OperationCount, int64(MaxOperations))
		}
		if s.ScanLengthMax < 0 || s.ScanLengthMax > MaxScanLength {
			add("scanLengthMax", "%d is out of range (valid: 0 for the default, or 1 to %d)", s.ScanLengthMax, MaxScanLength)
		}
	}
	return ps
}

// checkLoadBatch bounds the records per insert, and their bytes by the data set's record size
// rec (0: unknown).
func checkLoadBatch(n int, rec int64) string {
	if n < 0 || n > MaxLoadBatch {
		return fmt.Sprintf("%d is out of range (valid: 0 for the default 100, or 1 to %d records per insert)", n, MaxLoadBatch)
	}
	if rec <= 0 {
		return ""
	}
	if n == 0 {
		n = DefaultLoadBatch
	}
	if batch := int64(n) * rec; batch > MaxBatchBytes {
		return fmt.Sprintf("%d records of %s is %s per insert (valid: at most %s per batch; lower loadBatch)",
			n, section.FormatBytes(rec), section.FormatBytes(batch), section.FormatBytes(MaxBatchBytes))
	}
	return ""
}

// checkConsistency checks a consistency level against the levels of the experiment's dbms
// (of every dbms that takes one when the matrix varies it, a.DBMS empty).
func checkConsistency(v string, a section.At) []section.Problem {
	takes := sortedKeys(a.Consistencies)
	levels := a.Consistencies[a.DBMS]
	if levels == nil {
		for _, d := range takes {
			levels = append(levels, a.Consistencies[d]...)
		}
	}
	field := a.Path + ".consistency"
	var ps []section.Problem
	if msg := section.NotOneOf(v, levels); msg != "" {
		ps = append(ps, a.Problem(field, msg))
	}
	if a.DBMS != "" && !slices.Contains(takes, a.DBMS) {
		ps = append(ps, a.Problem(field, fmt.Sprintf("applies to dbms %s only, but this experiment runs %s", strings.Join(takes, " or "), a.DBMS)))
	}
	return ps
}
