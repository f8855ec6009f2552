package spec

// Safety checks. boxbench runs as root and specs are shared between people, so a spec is
// untrusted input: every name that reaches a path, a cgroup, a label, an argv or a terminal
// follows the experiment name's rule; no string carries control characters; numbers are finite
// and sizes fit in 64 bits; durations have a floor and a ceiling; the matrix has a cap; YAML
// anchors, aliases and merge keys are refused (yaml.v3 decodes a merge into a struct with
// known-field checking in ways that silently drop settings, and refusing is the simplest
// behaviour that is exactly right). docs/security.md lists each guarantee with its test.

import (
	"fmt"
	"github.com/boxbench/boxbench/internal/resource"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/spec/section"
)

// Limits of a spec that keep a mistake (or a hostile file) from exhausting the host.
const (
	// MaxSpecBytes is the largest spec file read.
	MaxSpecBytes = 1 << 20
	// MaxPlannedRuns caps cells × repetitions (the adaptive maximum when repetitions adapt).
	MaxPlannedRuns = 10000
	// MinInterval is the shortest workload or telemetry interval.
	MinInterval = 100 * time.Millisecond
	// MaxMeasure bounds a workload's duration and warm-up.
	MaxMeasure = 24 * time.Hour
	// MaxWorkloadInterval and MaxTelemetryInterval bound the sampling intervals.
	MaxWorkloadInterval  = time.Hour
	MaxTelemetryInterval = time.Minute
	// MaxCPUs bounds limits.cpus (a CFS quota of cpus × period must fit in 64 bits).
	MaxCPUs = 4096
)

const nameRule = "use 1-63 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit"

// ValidName reports whether s follows the experiment name's rule, which every name that
// reaches a path, a cgroup, a label, an argv or a terminal follows. "." and ".." and names
// starting with '-' never match.
func ValidName(s string) bool { return nameRe.MatchString(s) }

// validValue: a limit key's value is a limit (512MiB, 0.5), every other value a plain name
// or, for storage, one of the parametric storages (pvc:<name>).
func validValue(key, v string, storages []string) bool {
	if contains(LimitKeys, key) {
		var l resource.Limits
		return setLimit(&l, key, v) == nil
	}
	if IsSweepKey(key) {
		return checkSweepValue(key, v) == nil
	}
	return ValidName(v) || (key == "storage" && parametric(storages, v))
}

var deviceRe = regexp.MustCompile(`^/dev/[A-Za-z0-9][A-Za-z0-9._/-]*$`)

type lineValue struct {
	line  int
	value string
}

// yamlProblems checks the document tree before it is decoded: anchors, aliases and merge keys;
// control characters in any key or value; non-finite floats. It also records which field each
// scalar belongs to, for finish.
func (e *Experiment) yamlProblems(root *yaml.Node) []Problem {
	var ps []Problem
	e.fields = map[lineValue]string{}
	var walk func(n *yaml.Node, field string)
	walk = func(n *yaml.Node, field string) {
		if n.Anchor != "" {
			ps = append(ps, Problem{Line: n.Line, Field: field, Message: fmt.Sprintf("anchor &%s: YAML anchors, aliases and merge keys are not supported (valid: write each value out)", section.SafeText(n.Anchor))})
		}
		switch n.Kind {
		case yaml.AliasNode:
			ps = append(ps, Problem{Line: n.Line, Field: field, Message: fmt.Sprintf("alias *%s: YAML anchors, aliases and merge keys are not supported (valid: write each value out)", section.SafeText(n.Value))})
			return // never follow an alias: it may be a loop or a billion laughs
		case yaml.ScalarNode:
			if _, seen := e.fields[lineValue{n.Line, n.Value}]; !seen && field != "" {
				e.fields[lineValue{n.Line, n.Value}] = field
			}
			if r, bad := section.ControlRune(n.Value); bad {
				ps = append(ps, Problem{Line: n.Line, Field: field, Message: fmt.Sprintf("%q holds the control character %U (valid: printable text on one line; no escape sequences, tabs or line breaks)", n.Value, r)})
			}
			if n.ShortTag() == "!!float" {
				var f float64
				if n.Decode(&f) == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
					ps = append(ps, Problem{Line: n.Line, Field: field, Message: fmt.Sprintf("%q is not a finite number (valid: a finite number)", n.Value)})
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.ShortTag() == "!!merge" || (k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Style == 0) {
					ps = append(ps, Problem{Line: k.Line, Field: field, Message: "merge key <<: YAML anchors, aliases and merge keys are not supported (valid: write each field out)"})
					continue
				}
				walk(k, field)
				walk(v, joinField(field, k.Value))
			}
		case yaml.SequenceNode, yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, field)
			}
		}
	}
	walk(root, "")
	return ps
}

func joinField(prefix, key string) string {
	key = section.SafeText(key)
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// finish names the field of a decode error that has only a line and a quoted value (added
// to the message, whose shape callers match), and escapes control characters in every problem:
// names and values reach messages through yaml.v3's errors and field paths as well as through
// this package's %q.
func (e *Experiment) finish(ps []Problem) []Problem {
	for i := range ps {
		p := &ps[i]
		if p.Field == "" && p.Line > 0 && strings.HasPrefix(p.Message, `"`) {
			if q, err := strconv.QuotedPrefix(p.Message); err == nil {
				v, _ := strconv.Unquote(q)
				if f, ok := e.fields[lineValue{p.Line, v}]; ok {
					p.Message += " (field " + f + ")"
				}
			}
		}
		p.Field, p.Message = section.SafeText(p.Field), section.SafeText(p.Message)
	}
	return ps
}

// safety adds the checks that keep a spec from harming the host.
func (c *checker) safety() {
	e := c.e
	for _, n := range sortedNames(e.Workloads) {
		c.name("workloads", "workloads."+n, "workload", n)
	}
	nbs := make([]string, 0, len(e.Neighbours))
	for n := range e.Neighbours {
		nbs = append(nbs, n)
	}
	sort.Strings(nbs)
	for _, n := range nbs {
		c.name("neighbours", "neighbours."+n, "neighbour", n)
	}
	for _, d := range append(append([]Dim{}, e.Matrix.Dims...), e.Matrix.Zip...) {
		if e.Values(d.Key) != nil || contains(LimitKeys, d.Key) || IsSweepKey(d.Key) {
			continue // a closed vocabulary, a limit or a sweep key, checked by matrix()
		}
		for _, v := range d.Values {
			if !ValidName(v) {
				c.put(Problem{Line: d.Line, Field: "matrix." + d.Key,
					Message: fmt.Sprintf("%q is not a valid %s name: %s", v, d.Key, nameRule)})
			}
		}
	}
	for i, ex := range e.Matrix.Exclude {
		for _, k := range SortedKeys(ex) {
			if !validValue(k, ex[k], e.Values("storage")) {
				c.add("matrix.exclude", "entry %d: %s=%q is not a valid value: %s", i+1, section.SafeText(k), ex[k], nameRule)
			}
		}
	}
	for _, k := range SortedKeys(e.Baseline) {
		if !validValue(k, e.Baseline[k], e.Values("storage")) {
			c.add("baseline", "%s=%q is not a valid value: %s", section.SafeText(k), e.Baseline[k], nameRule)
		}
	}
	c.device()
	c.durations()
	c.numbers("limits", e.Limits)
	for _, n := range nbs {
		if nb := e.Neighbours[n]; nb != nil {
			c.numbers("neighbours."+n+".limits", nb.Limits)
			c.ownCheck(section.StageSafety, "neighbours."+n+".workload", &nb.Workload, true)
		}
	}
	for p, w := range e.usedWorkloads() {
		c.ownCheck(section.StageSafety, p, w, false)
	}
	c.plannedRuns()
}

// name checks one map key that becomes a name; field is the section, at is the key's path.
func (c *checker) name(field, at, what, n string) {
	if ValidName(n) {
		return
	}
	c.put(Problem{Line: c.e.lines[at], Field: field,
		Message: fmt.Sprintf("%q is not a valid %s name: %s (it becomes part of paths, cgroups, labels and run ids)", n, what, nameRule)})
}

func (c *checker) device() {
	b := c.e.StorageOptions.Blockdev
	const f = "storageOptions.blockdev.device"
	if b.Device != "" && (!deviceRe.MatchString(b.Device) || path.Clean(b.Device) != b.Device || strings.Contains(b.Device, "/../")) {
		c.add(f, "%q is not a device path (valid: an absolute path under /dev, like /dev/sdb or /dev/nvme1n1p2, without '..')", b.Device)
	}
	if b.Wipe && b.Device == "" {
		c.add("storageOptions.blockdev.wipe", "true applies to a named device only (valid: set device: too, or leave wipe out)")
	}
}

func (c *checker) durations() {
	e := c.e
	between := func(field string, d Duration, lo, hi time.Duration) {
		if d.D() < lo || d.D() > hi {
			c.add(field, "%s is out of range (valid: %s to %s)", d.D(), lo, hi)
		}
	}
	upTo := func(field string, d Duration, hi time.Duration) {
		if d.D() > hi {
			c.add(field, "%s is too long (valid: up to %s)", d.D(), hi)
		}
	}
	for p, w := range e.usedWorkloads() {
		upTo(p+".duration", w.Duration, MaxMeasure)
		upTo(p+".warmup", w.Warmup, MaxMeasure)
		upTo(p+".interval", w.Interval, MaxWorkloadInterval) // the floor is checked by workload()
	}
	for n, nb := range e.Neighbours {
		if nb == nil {
			continue
		}
		p := "neighbours." + n + ".workload"
		upTo(p+".duration", nb.Workload.Duration, MaxMeasure)
		upTo(p+".warmup", nb.Workload.Warmup, MaxMeasure)
		if nb.Workload.Interval != 0 {
			between(p+".interval", nb.Workload.Interval, MinInterval, MaxWorkloadInterval)
		}
	}
	between("telemetry.interval", e.Telemetry.Interval, MinInterval, MaxTelemetryInterval)
	between("timeouts.provision", e.Timeouts.Provision, time.Second, 24*time.Hour)
	between("timeouts.load", e.Timeouts.Load, time.Second, 7*24*time.Hour)
}

// numbers bounds what could overflow further down (a CFS quota is cpus × period in µs).
// Non-finite values are refused for every field by yamlProblems.
func (c *checker) numbers(p string, l Limits) {
	if l.CPUs > MaxCPUs {
		c.add(p+".cpus", "%g is out of range (valid: 0 to %d)", l.CPUs, MaxCPUs)
	}
}

// usedWorkloads returns the workloads cells run, by field path.
func (e *Experiment) usedWorkloads() map[string]*Workload {
	if e.varies("workload") {
		out := map[string]*Workload{}
		for n, w := range e.Workloads {
			if w != nil {
				out["workloads."+n] = w
			}
		}
		return out
	}
	return map[string]*Workload{"workload": &e.Workload}
}

// plannedRuns refuses a matrix whose cells × repetitions exceed MaxPlannedRuns.
func (c *checker) plannedRuns() {
	if n := len(c.e.Matrix.Exclude); n > 0 {
		if before := c.e.cellsBeforeExclusions(); satMul(before, int64(n)) > MaxExcludeWork {
			c.add("matrix.exclude", "%d entries over %d cells before exclusions is more than boxbench applies (valid: cells before exclusions × entries at most %d; vary fewer values)",
				n, before, MaxExcludeWork)
			return
		}
	}
	cells, exact := c.e.cellCount()
	reps := int64(max(c.e.Repetitions.Max, c.e.Repetitions.Min, 1))
	runs := satMul(cells, reps)
	if runs <= MaxPlannedRuns {
		return
	}
	how := "cells"
	if !exact {
		how = "cells before exclusions"
	}
	c.add("matrix", "%d %s × %d repetitions = %d planned runs is over the cap of %d (valid: at most %d runs; split the experiment or vary fewer values)",
		cells, how, reps, runs, MaxPlannedRuns, MaxPlannedRuns)
}

// MaxExcludeWork bounds cells before exclusions × exclude entries: the work of applying the
// exclusions, here and in the planner.
const MaxExcludeWork = 10_000_000

// cellCount counts the matrix's cells, saturating. Exclusions are applied when the product is
// small enough to enumerate (exact is then true).
func (e *Experiment) cellCount() (n int64, exact bool) {
	total := e.cellsBeforeExclusions()
	if len(e.Matrix.Exclude) == 0 || total == 0 {
		return total, true
	}
	if total > 10*MaxPlannedRuns || satMul(total, int64(len(e.Matrix.Exclude))) > MaxExcludeWork {
		return total, false
	}
	dims, zip := e.Matrix.Dims, e.zipLen()
	ex := NewExcluder(e.Matrix.Exclude)
	var count int64
	cell := map[string]string{}
	idx := make([]int, len(dims))
	for {
		for z := 0; z < zip; z++ {
			for i, d := range dims {
				cell[d.Key] = d.Values[idx[i]]
			}
			for _, zd := range e.Matrix.Zip {
				cell[zd.Key] = zd.Values[z]
			}
			if !ex.Excludes(cell) {
				count++
			}
		}
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(dims[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return count, true
		}
	}
}

// cellsBeforeExclusions is the product of the dims and the zip's length, saturating.
func (e *Experiment) cellsBeforeExclusions() int64 {
	total := int64(1)
	for _, d := range e.Matrix.Dims {
		total = satMul(total, int64(len(d.Values)))
	}
	return satMul(total, int64(e.zipLen()))
}

func (e *Experiment) zipLen() int {
	if len(e.Matrix.Zip) == 0 {
		return 1
	}
	n := len(e.Matrix.Zip[0].Values)
	for _, z := range e.Matrix.Zip {
		n = min(n, len(z.Values))
	}
	return n
}

// Excluder tells the cells that matrix.exclude drops. Entries are indexed by one of their
// pairs (the first key in sorted order), so a cell is compared only with the entries that
// pair already matches: applying thousands of entries to thousands of cells stays near linear.
type Excluder struct {
	index map[string]map[string][]map[string]string // key → value → entries whose first pair it is
	keys  []string
}

// NewExcluder indexes exclude entries; an empty entry matches nothing.
func NewExcluder(ex []map[string]string) *Excluder {
	x := &Excluder{index: map[string]map[string][]map[string]string{}}
	for _, entry := range ex {
		if len(entry) == 0 {
			continue
		}
		k := SortedKeys(entry)[0]
		if x.index[k] == nil {
			x.index[k] = map[string][]map[string]string{}
			x.keys = append(x.keys, k)
		}
		x.index[k][entry[k]] = append(x.index[k][entry[k]], entry)
	}
	return x
}

// Excludes reports whether some entry matches every one of its keys in cell.
func (x *Excluder) Excludes(cell map[string]string) bool {
	for _, k := range x.keys {
		v, ok := cell[k]
		if !ok {
			continue
		}
		for _, entry := range x.index[k][v] {
			match := true
			for ek, ev := range entry {
				if cell[ek] != ev {
					match = false
					break
				}
			}
			if match {
				return true
			}
		}
	}
	return false
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}
