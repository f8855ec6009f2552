package spec

import (
	"sort"
	"strings"
	"time"

	"github.com/boxbench/boxbench/spec/section"
)

func (c *checker) workload(p string, w *Workload) {
	if types := c.e.vocab.MeasuredTypes(); !contains(types, w.Type) {
		c.oneOf(p+".type", w.Type, types)
		return
	}
	c.foreignFields(p, w, "this workload is")
	if w.Threads < 1 || w.Threads > 4096 {
		c.add(p+".threads", "%d is out of range (valid: 1 to 4096)", w.Threads)
	}
	v := c.e.vocab
	if w.Duration == 0 && c.e.FactsOf(w).Operations <= 0 {
		c.add(p+".duration", "missing or zero: say how long to measure, e.g. duration: 30s")
	}
	if w.Interval.D() < 100*time.Millisecond {
		c.add(p+".interval", "%s is too short (valid: 100ms or more)", w.Interval.D())
	}
	// The checks of the kind's own section (its row's Own).
	c.ownCheck(section.StageFields, p, w, false)
	if v.workloadKind(w.Type).WholeSeconds {
		for field, d := range map[string]Duration{"duration": w.Duration, "warmup": w.Warmup, "interval": w.Interval} {
			if d.D()%time.Second != 0 {
				c.add(p+"."+field, "%s is not a whole number of seconds (%s counts in seconds)", d.D(), w.Type)
			}
		}
		if w.Interval.D() >= time.Second && w.Warmup.D()%w.Interval.D() != 0 {
			c.add(p+".warmup", "%s is not a multiple of the interval %s", w.Warmup.D(), w.Interval.D())
		}
	}
}

// foreignFields refuses the fields set on w (at path p) that its kind does not take, naming the
// kinds that do; whose completes the message ("this workload is", "this neighbour runs").
func (c *checker) foreignFields(p string, w *Workload, whose string) {
	for _, field := range c.e.vocab.kindFields() {
		if _, set := c.e.lines[p+"."+field]; set && !c.e.vocab.owns(w, field) {
			c.add(p+"."+field, "applies to workload type %s only, but %s %s", strings.Join(c.e.vocab.owners(field), ", "), whose, w.Type)
		}
	}
}

func (c *checker) neighbours() {
	e := c.e
	names := make([]string, 0, len(e.Neighbours))
	for n := range e.Neighbours {
		names = append(names, n)
	}
	sort.Strings(names)
	if e.varies("neighbour") {
		for _, v := range e.ValuesOf("neighbour") {
			if _, ok := e.Neighbours[v]; !ok && v != "none" {
				c.add("matrix.neighbour", "%q is not defined under neighbours: (defined: none, %s)", v, strings.Join(names, ", "))
			}
		}
	} else if len(e.Neighbours) > 0 {
		c.add("neighbours", "neighbours are placed by the matrix key neighbour, e.g. neighbour: [none, %s]", strings.Join(names, ", "))
	}
	for _, n := range names {
		nb := e.Neighbours[n]
		p := "neighbours." + n
		if nb == nil {
			c.add(p, "empty: give at least workload: {type: fio, job: fsync-high}")
			continue
		}
		if nb.Platform != "" {
			c.oneOf(p+".platform", nb.Platform, e.vocab.PlatformNames())
		}
		if nb.Storage != "" && nb.Storage != "same" && nb.Storage != NeighbourStorageShared {
			plats := known([]string{nb.Platform}, e.vocab) // empty: any platform's
			c.oneOf(p+".storage", nb.Storage, append([]string{"same", NeighbourStorageShared}, e.vocab.union(plats, func(w PlatformWords) []string { return w.Storages })...))
		}
		c.limits(p+".limits", nb.Limits)
		w := nb.Workload
		if types := e.vocab.NeighbourTypes(); !contains(types, w.Type) {
			c.oneOf(p+".workload.type", w.Type, types)
			continue
		}
		c.ownCheck(section.StageFields, p+".workload", &w, true)
		c.foreignFields(p+".workload", &w, "this neighbour runs")
	}
}

// needsRecords: a workload of a kind that needs a record count (WorkloadKind.Records) runs.
func (e *Experiment) needsRecords() bool {
	if e.varies("workload") {
		for _, w := range e.Workloads {
			if e.vocab.workloadKind(w.Type).Records {
				return true
			}
		}
		return false
	}
	return e.vocab.workloadKind(e.Workload.Type).Records
}

func sortedNames(m map[string]*Workload) []string { return sortedKeys(m) }

// NeighbourStorageShared is the neighbour storage that puts its data on the victim's own file
// system (neighbours.<name>.storage).
const NeighbourStorageShared = "shared"
