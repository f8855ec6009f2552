package spec

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/spec/section"
)

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

type checker struct {
	e        *Experiment
	problems []Problem
	more     int // problems beyond MaxProblems, counted and not kept (their messages are not even made)
}

func (c *checker) add(field, format string, a ...any) {
	if c.full() {
		return
	}
	c.problems = append(c.problems, Problem{Line: c.e.lines[field], Field: field, Message: fmt.Sprintf(format, a...)})
}

func (c *checker) put(p Problem) {
	if !c.full() {
		c.problems = append(c.problems, p)
	}
}

// full counts one more problem and says whether MaxProblems are kept already.
func (c *checker) full() bool {
	if len(c.problems) >= MaxProblems {
		c.more++
		return true
	}
	return false
}

// cpuset checks a box's cpu list: a list (numbers checked before ranges are expanded, each
// below placement.MaxCPU, ranges low-high) of cpus this host has (when the vocabulary knows
// them): a cgroup, LXC or QEMU would refuse others at run time, and a cluster could silently
// give all cpus instead.
func (c *checker) cpuset(field, v string) {
	cpus, err := placement.ParseList(v)
	if err != nil {
		c.add(field, "%v", err)
		return
	}
	if host := c.e.vocab.CPUs; host != nil {
		if missing := placement.Missing(cpus, host); len(missing) > 0 {
			c.add(field, "%s names cpu %s, which this host does not offer: it has %d cpus (valid: cpus within %s)",
				quoteCut(v), placement.FormatList(missing), len(host), placement.FormatList(host))
		}
	}
}

func (c *checker) oneOf(field, v string, valid []string) {
	if msg := section.NotOneOf(v, valid); msg != "" {
		c.add(field, "%s", msg)
	}
}

func (e *Experiment) validate() ([]Problem, int) {
	c := &checker{e: e}
	if e.APIVersion != APIVersion {
		c.add("apiVersion", "%q is not supported (valid: %s)", e.APIVersion, APIVersion)
	}
	if e.Kind != "Experiment" {
		c.add("kind", "%q is not supported (valid: Experiment)", e.Kind)
	}
	if !nameRe.MatchString(e.Name) {
		c.add("name", "%q is not a valid name: use 1-63 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", e.Name)
	}
	if e.DBMS == "" && !e.varies("dbms") {
		c.add("dbms", "missing (valid: %s)", strings.Join(e.vocab.DBMSs, ", "))
	} else if e.DBMS != "" {
		c.oneOf("dbms", e.DBMS, e.vocab.DBMSs)
	}
	if e.varies("workload") {
		if _, set := e.lines["workload"]; set {
			c.add("workload", "the matrix varies workload: define each under workloads: and leave workload: out")
		}
		for _, name := range e.ValuesOf("workload") {
			if _, ok := e.Workloads[name]; !ok {
				c.add("matrix.workload", "%q is not defined under workloads: (defined: %s)", name, strings.Join(sortedNames(e.Workloads), ", "))
			}
		}
	} else if len(e.Workloads) > 0 {
		c.add("workloads", "named workloads are only used when the matrix varies workload, e.g. workload: [%s]", strings.Join(sortedNames(e.Workloads), ", "))
	}
	if e.varies("workload") {
		for _, name := range sortedNames(e.Workloads) {
			c.workload("workloads."+name, e.Workloads[name])
		}
	} else {
		c.workload("workload", &e.Workload)
	}
	c.dataset()
	c.limits("limits", e.Limits)
	c.neighbours()
	c.matrix()
	c.repetitions()
	c.oneOf("order", e.Order, Orders)
	c.pairing()
	c.oneOf("steadyState", e.SteadyState, SteadyStates)
	c.oneOf("cache", e.Cache, Caches)
	c.quietStart()
	c.placement()
	c.topology()
	c.published() // spec/published.go
	if p := e.Placement.ClientPolicy; p != "" {
		c.oneOf("placement.clientPolicy", p, placement.Policies)
		if e.varies("clientPolicy") {
			c.add("placement.clientPolicy", "the matrix varies clientPolicy: leave placement.clientPolicy out")
		}
	}
	if fs := e.StorageOptions.Blockdev.FS; fs != "" {
		c.oneOf("storageOptions.blockdev.fs", fs, []string{"ext4", "xfs"})
	}
	c.bounds() // spec/bounds.go
	c.client() // spec/client.go
	c.safety() // spec/safety.go
	return c.problems, c.more
}

func (c *checker) dataset() {
	d := c.e.Dataset
	switch {
	case d.Bound != "" && d.Records != 0:
		c.add("dataset.records", "give records or bound, not both")
	case d.Bound != "":
		c.oneOf("dataset.bound", d.Bound, Bounds)
		if c.e.Limits.Memory == 0 && !c.e.varies("memory") {
			c.add("dataset.bound", "bound %s is sized from limits.memory, which is not set (nor varied by the matrix)", d.Bound)
		}
	case d.Records < 0:
		c.add("dataset.records", "%d is negative", d.Records)
	case d.Records == 0 && !c.e.varies("bound") && !c.e.varies("dataset.records") && c.e.needsRecords():
		c.add("dataset", "give records (e.g. records: 100000) or bound (memory or disk)")
	}
	if d.FieldCount < 1 || d.FieldCount > 1000 {
		c.add("dataset.fieldCount", "%d is out of range (valid: 1 to 1000)", d.FieldCount)
	}
	if d.FieldLength < 1 || d.FieldLength > 1<<20 {
		c.add("dataset.fieldLength", "%d is out of range (valid: 1 to 1048576 bytes)", d.FieldLength)
	}
}

func (c *checker) limits(p string, l Limits) {
	if l.CPUs < 0 {
		c.add(p+".cpus", "%g is negative (0 or absent = no limit)", l.CPUs)
	}
	if l.Cpuset != "" {
		c.cpuset(p+".cpuset", l.Cpuset)
	}
	if l.Memory != 0 && l.Memory < 64<<20 {
		c.add(p+".memory", "%s is too small for a database (valid: 64MiB or more)", FormatBytes(int64(l.Memory)))
	}
	for field, w := range map[string]int{"cpuWeight": l.CPUWeight, "ioWeight": l.IOWeight} {
		if w < 0 || w > 10000 {
			c.add(p+"."+field, "%d is out of range (valid: 1 to 10000, cgroup v2's scale; 100 is the default)", w)
		}
	}
	for field, v := range map[string]int64{"readBps": int64(l.ReadBps), "writeBps": int64(l.WriteBps), "readIops": l.ReadIOPS, "writeIops": l.WriteIOPS} {
		if v < 0 {
			c.add(p+"."+field, "%d is negative (0 or absent = no limit)", v)
		}
	}
}
