package spec

import (
	"fmt"
	"github.com/boxbench/boxbench/internal/resource"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/spec/section"
)

// Closed vocabularies of the spec itself. The vocabularies of the parts a build registers
// (databases, platforms with their storages and networks) come from a Vocabulary.
var (
	WorkloadTypes = []string{"ycsb", "sysbench", "fio"}
	// NeighbourTypes are the workloads a neighbour can run inside its box.
	NeighbourTypes = []string{"fio", "stress"}
	Mixes          = []string{"a", "b", "c", "d", "e", "f", "write-heavy", "read-heavy", "custom"}
	Bounds         = []string{"memory", "disk"}
	Orders         = []string{"randomized", "sequential", "duet"}
	Pairings       = []string{"none", "rounds", "duets"}
	// SteadyStates are the values of steadyState; Caches of cache.
	SteadyStates = []string{"mser", "off"}
	Caches       = []string{"warm", "cold"}
	// MatrixKeys are the keys a matrix (and a baseline, zip or exclude) may vary.
	MatrixKeys = []string{"dbms", "workload", "platform", "runtime", "storage", "network", "cluster", "neighbour", "mix", "bound",
		"clientPolicy", "cpus", "cpuset", "memory", "cpuWeight", "ioWeight",
		// SweepKeys (spec/sweepkeys.go), in that order.
		"workload.threads", "workload.targetRate", "workload.proportions.read", "workload.requestDistribution",
		"workload.rate", "workload.tableSize", "workload.job.iodepth", "dataset.records", "replica"}
)

// Vocabulary is what the parts registered in this build offer (package builtin makes it from
// the platforms' own descriptions): validation takes its lists from here, so a new platform
// needs no change in this package.
type Vocabulary struct {
	DBMSs     []string
	Platforms map[string]PlatformWords
	// Baseline is the platform of a cell whose matrix does not vary platform, and the platform a
	// matrix that varies it is compared with by default.
	Baseline string
	// CPUs are the host cpus boxbench may place processes on (placement.HostCPUs); nil skips
	// the checks of placement against the host.
	CPUs []int
	// Topology returns the problems of a topology for the named dbms (each "field: message";
	// one problem when the dbms has none); nil skips the check.
	Topology func(dbms string, t Topology) []string
	// Consistencies are the levels of workload.consistency, by the dbms whose generator driver
	// takes one (the table of databases); a dbms not listed takes none.
	Consistencies map[string][]string
	// Sections decode the top-level sections that platforms own (platform.Settings), by key.
	Sections map[string]SectionDecoder
}

// consistency checks workload.consistency against the levels of the experiment's dbms (of
// every dbms that takes one when the matrix varies it).
func (c *checker) consistency(field, v string) {
	takes := sortedKeys(c.e.vocab.Consistencies)
	levels := c.e.vocab.Consistencies[c.e.DBMS]
	if levels == nil {
		for _, d := range takes {
			levels = append(levels, c.e.vocab.Consistencies[d]...)
		}
	}
	c.oneOf(field, v, levels)
	if c.e.DBMS != "" && !contains(takes, c.e.DBMS) {
		c.add(field, "applies to dbms %s only, but this experiment runs %s", strings.Join(takes, " or "), c.e.DBMS)
	}
}

// PlatformWords are the storage and network values one platform offers.
type PlatformWords struct {
	Storages []string
	Networks []string
	// Clusters says the platform runs topologies (platform.Clusterer).
	Clusters bool
	// ClusterRefuses are its networks that cannot carry a cluster, each with the reason.
	ClusterRefuses map[string]string
	// Client and StorageParams: the platform's client words (spec/client.go, platform.Info).
	Client        bool
	StorageParams map[string]section.Param
}

// PlatformNames returns the platforms in sorted order.
func (v Vocabulary) PlatformNames() []string { return sortedKeys(v.Platforms) }

// union of one field over the named platforms (every platform when names is empty), sorted.
func (v Vocabulary) union(names []string, field func(PlatformWords) []string) []string {
	if len(names) == 0 {
		names = v.PlatformNames()
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		for _, x := range field(v.Platforms[n]) {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	sort.Strings(out)
	return out
}

// DefaultPlatform is the platform of cells whose matrix does not vary platform.
func (e *Experiment) DefaultPlatform() string { return e.vocab.Baseline }

// Values lists the valid values of a matrix key in e (nil for open vocabularies). Storages and
// networks are those any platform of this build offers: a cell whose platform lacks one is
// skipped by the planner with the platform's reason, not refused here.
func (e *Experiment) Values(key string) []string {
	v := e.vocab
	switch key {
	case "dbms":
		return v.DBMSs
	case "platform":
		return v.PlatformNames()
	case "storage":
		return v.union(nil, func(w PlatformWords) []string { return w.Storages })
	case "network":
		return v.union(nil, func(w PlatformWords) []string { return w.Networks })
	case "mix":
		return Mixes
	case "bound":
		return Bounds
	case "clientPolicy":
		return placement.Policies
	case "cluster":
		return e.clusterNames()
	}
	return nil // neighbour (names under neighbours:), workload, runtime (probed on the host)
}

// known keeps the platform names v has (unknown ones are reported by the matrix check).
func known(names []string, v Vocabulary) []string {
	var out []string
	for _, n := range names {
		if _, ok := v.Platforms[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// workloadFields says which workload fields belong to which type (common fields are absent).
var workloadFields = map[string]string{
	"mix": "ycsb", "proportions": "ycsb", "requestDistribution": "ycsb", "targetRate": "ycsb",
	"operationCount": "ycsb", "readAllFields": "ycsb", "writeAllFields": "ycsb", "scanLengthMax": "ycsb",
	"keyOrder": "ycsb", "loadThreads": "ycsb", "loadBatch": "ycsb", "consistency": "ycsb",
	"test": "sysbench", "tables": "sysbench", "tableSize": "sysbench", "rate": "sysbench",
	"job": "fio", "direct": "fio", "size": "fio",
	"cpu": "stress", "vm": "stress", "vmBytes": "stress",
}

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)
var replicaRe = regexp.MustCompile(`^[a-z0-9_-]{1,16}$`)

func (e *Experiment) applyDefaults() {
	e.workloadDefaults(&e.Workload, "workload")
	for name, w := range e.Workloads {
		if w == nil {
			w = &Workload{}
			e.Workloads[name] = w
		}
		e.workloadDefaults(w, "workloads."+name)
	}
	if e.Dataset.FieldCount == 0 {
		e.Dataset.FieldCount = 10
	}
	if e.Dataset.FieldLength == 0 {
		e.Dataset.FieldLength = 100
	}
	if e.Repetitions.Min == 0 && e.Repetitions.Max == 0 {
		e.Repetitions = Repetitions{Min: 3, Max: 3}
	}
	if e.Order == "" {
		e.Order = "randomized"
	}
	if e.Pairing == "" {
		e.Pairing = DefaultPairing(e.Order)
	}
	if e.Telemetry.Interval == 0 {
		e.Telemetry.Interval = Duration(time.Second)
	}
	if e.Timeouts.Provision == 0 {
		e.Timeouts.Provision = Duration(5 * time.Minute)
	}
	if e.Timeouts.Load == 0 {
		e.Timeouts.Load = Duration(60 * time.Minute)
	}
	if _, set := e.lines["quietStart.timeout"]; !set {
		e.QuietStart.Timeout = Duration(DefaultQuietTimeout)
	}
	if _, set := e.lines["quietStart.cpuBusy"]; !set {
		e.QuietStart.CPUBusy = 0.10
	}
	if _, set := e.lines["quietStart.diskBusy"]; !set {
		e.QuietStart.DiskBusy = 0.10
	}
	if e.QuietStart.Window == 0 {
		e.QuietStart.Window = Duration(time.Second)
	}
	if e.SteadyState == "" {
		e.SteadyState = "mser"
	}
	if e.Cache == "" {
		e.Cache = "warm"
	}
	if len(e.Baseline) == 0 {
		e.Baseline = e.defaultBaseline()
	}
}

func (e *Experiment) workloadDefaults(w *Workload, path string) {
	if w.Type == "" {
		w.Type = "ycsb"
	}
	if _, set := e.lines[path+".threads"]; !set {
		w.Threads = 8 // an explicit 0 stays, and is reported
		if w.Type == "fio" {
			w.Threads = 1 // fio jobs each write their own file
		}
	}
	if w.Interval == 0 {
		w.Interval = Duration(time.Second)
	}
	if w.Type == "ycsb" && w.Mix == "" {
		w.Mix = "a"
		if len(w.Proportions) > 0 {
			w.Mix = "custom"
		}
	}
}

func (e *Experiment) defaultBaseline() map[string]string {
	for _, d := range append(append([]Dim{}, e.Matrix.Dims...), e.Matrix.Zip...) {
		if b := e.vocab.Baseline; d.Key == "platform" && b != "" && contains(d.Values, b) {
			return map[string]string{"platform": b}
		}
	}
	for _, d := range e.Matrix.Dims {
		if len(d.Values) > 0 {
			return map[string]string{d.Key: d.Values[0]}
		}
	}
	return nil
}

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

func (c *checker) workload(p string, w *Workload) {
	if !contains(WorkloadTypes, w.Type) {
		c.oneOf(p+".type", w.Type, WorkloadTypes)
		return
	}
	for field, typ := range workloadFields {
		if _, set := c.e.lines[p+"."+field]; set && typ != w.Type {
			c.add(p+"."+field, "applies to workload type %s only, but this workload is %s", typ, w.Type)
		}
	}
	if w.Threads < 1 || w.Threads > 4096 {
		c.add(p+".threads", "%d is out of range (valid: 1 to 4096)", w.Threads)
	}
	if w.Duration == 0 && !(w.Type == "ycsb" && w.OperationCount > 0) {
		c.add(p+".duration", "missing or zero: say how long to measure, e.g. duration: 30s")
	}
	if w.Interval.D() < 100*time.Millisecond {
		c.add(p+".interval", "%s is too short (valid: 100ms or more)", w.Interval.D())
	}
	switch w.Type {
	case "ycsb":
		c.oneOf(p+".mix", w.Mix, Mixes)
		if w.Mix == "custom" && len(w.Proportions) == 0 {
			c.add(p+".proportions", "mix custom needs proportions, e.g. {read: 0.9, update: 0.1}")
		}
		if w.TargetRate < 0 {
			c.add(p+".targetRate", "%g is negative (0 = closed loop; >0 = ops/s)", w.TargetRate)
		}
		if _, set := c.e.lines[p+".consistency"]; set {
			c.consistency(p+".consistency", w.Consistency)
		}
	case "sysbench":
		c.oneOf(p+".test", w.Test, []string{"oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select", "oltp_insert"})
		if w.Rate < 0 || w.Rate != float64(int64(w.Rate)) {
			c.add(p+".rate", "%g is not valid (0 = closed loop; a whole number of transactions/s)", w.Rate)
		}
		// sysbench counts in whole seconds.
		for field, d := range map[string]Duration{"duration": w.Duration, "warmup": w.Warmup, "interval": w.Interval} {
			if d.D()%time.Second != 0 {
				c.add(p+"."+field, "%s is not a whole number of seconds (sysbench counts in seconds)", d.D())
			}
		}
		if w.Interval.D() >= time.Second && w.Warmup.D()%w.Interval.D() != 0 {
			c.add(p+".warmup", "%s is not a multiple of the interval %s", w.Warmup.D(), w.Interval.D())
		}
	case "fio":
		if w.Job == nil {
			c.add(p+".job", "missing: name a preset (randread-4k, randwrite-4k, seqwrite-64k, wal, fsync-none, fsync-low, fsync-high) or give a map of fio options")
		}
	}
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
		if nb.Storage != "" && nb.Storage != "same" {
			plats := known([]string{nb.Platform}, e.vocab) // empty: any platform's
			c.oneOf(p+".storage", nb.Storage, append([]string{"same"}, e.vocab.union(plats, func(w PlatformWords) []string { return w.Storages })...))
		}
		c.limits(p+".limits", nb.Limits)
		w := nb.Workload
		if !contains(NeighbourTypes, w.Type) {
			c.oneOf(p+".workload.type", w.Type, NeighbourTypes)
			continue
		}
		if w.Type == "fio" && w.Job == nil {
			c.add(p+".workload.job", "missing: name a preset (fsync-none, fsync-low, fsync-high, seqwrite-64k, randwrite-4k, randread-4k, wal)")
		}
		if w.Type == "stress" && w.CPU <= 0 && w.VM <= 0 {
			c.add(p+".workload", "a stress neighbour needs cpu: N (CPU hog workers) or vm: N (memory-bandwidth hog workers)")
		}
		for field, typ := range workloadFields {
			if _, set := e.lines[p+".workload."+field]; set && typ != w.Type {
				c.add(p+".workload."+field, "applies to workload type %s only, but this neighbour runs %s", typ, w.Type)
			}
		}
	}
}

func (c *checker) matrix() {
	m := c.e.Matrix
	if len(m.Dims) == 0 && len(m.Zip) == 0 {
		c.add("matrix", "empty: give at least one key to vary, e.g. platform: [native, docker] (keys: %s)", strings.Join(MatrixKeys, ", "))
		return
	}
	seen := map[string]bool{}
	checkDim := func(d Dim, where string) {
		line := d.Line
		switch {
		case !contains(MatrixKeys, d.Key):
			msg := fmt.Sprintf("unknown matrix key %q (valid: %s)", d.Key, strings.Join(MatrixKeys, ", "))
			if s := sweepAlias(d.Key); s != "" {
				msg = fmt.Sprintf("unknown matrix key %q; did you mean %q? (a sweep key is the path of the field it varies; valid: %s)", d.Key, s, strings.Join(MatrixKeys, ", "))
			} else if s := section.Closest(d.Key, MatrixKeys); s != "" {
				msg = fmt.Sprintf("unknown matrix key %q; did you mean %q? (valid: %s)", d.Key, s, strings.Join(MatrixKeys, ", "))
			}
			c.put(Problem{Line: line, Field: where + d.Key, Message: msg})
			return
		case seen[d.Key]:
			c.put(Problem{Line: line, Field: where + d.Key, Message: "appears twice in the matrix"})
		case len(d.Values) == 0:
			c.put(Problem{Line: line, Field: where + d.Key, Message: "has no values"})
		}
		seen[d.Key] = true
		if d.Key == "replica" {
			for _, v := range d.Values {
				if !replicaRe.MatchString(v) {
					c.put(Problem{Line: line, Field: where + d.Key,
						Message: fmt.Sprintf("%q is not a replica label (valid: 1-16 of a-z 0-9 _ -, e.g. a, b, c)", v)})
				}
			}
		}
		if IsSweepKey(d.Key) {
			c.checkSweep(d, where)
		}
		if contains(LimitKeys, d.Key) {
			var scratch resource.Limits
			for _, v := range d.Values {
				if d.Key == "cpuset" {
					c.cpuset(where+d.Key, v) // also against the host's cpus
					continue
				}
				if err := setLimit(&scratch, d.Key, v); err != nil {
					c.put(Problem{Line: line, Field: where + d.Key, Message: err.Error()})
				}
			}
		}
		valid := c.e.Values(d.Key)
		dup := map[string]bool{}
		for _, v := range d.Values {
			if dup[v] && where == "matrix." { // zipped keys repeat values; their tuples must differ
				c.put(Problem{Line: line, Field: where + d.Key, Message: fmt.Sprintf("value %q is listed twice", v)})
			}
			dup[v] = true
			if valid != nil && !contains(valid, v) && !(d.Key == "storage" && parametric(valid, v)) {
				msg := fmt.Sprintf("%q is not valid (valid: %s)", v, strings.Join(valid, ", "))
				if s := section.Closest(v, valid); s != "" {
					msg = fmt.Sprintf("%q is not valid; did you mean %q? (valid: %s)", v, s, strings.Join(valid, ", "))
				}
				c.put(Problem{Line: line, Field: where + d.Key, Message: msg})
			}
		}
	}
	for _, d := range m.Dims {
		checkDim(d, "matrix.")
	}
	for _, d := range m.Zip {
		checkDim(d, "matrix.zip.")
		if len(d.Values) != len(m.Zip[0].Values) {
			c.put(Problem{Line: d.Line, Field: "matrix.zip." + d.Key,
				Message: fmt.Sprintf("has %d values but %s has %d; zipped keys need lists of equal length", len(d.Values), m.Zip[0].Key, len(m.Zip[0].Values))})
		}
	}
	if len(m.Zip) > 0 {
		seenTuple := map[string]int{}
		for i := range m.Zip[0].Values {
			var t []string
			for _, d := range m.Zip {
				if i < len(d.Values) {
					t = append(t, d.Key+"="+d.Values[i])
				}
			}
			key := strings.Join(t, ",")
			if j, ok := seenTuple[key]; ok {
				c.put(Problem{Line: m.Zip[0].Line, Field: "matrix.zip",
					Message: fmt.Sprintf("entries %d and %d are the same (%s)", j+1, i+1, key)})
			}
			seenTuple[key] = i
		}
	}
	// Sets, not lists: an exclude list of thousands over a key of thousands of values stays linear.
	values := map[string]map[string]bool{}
	for _, d := range append(append([]Dim{}, m.Dims...), m.Zip...) {
		if values[d.Key] == nil {
			values[d.Key] = map[string]bool{}
		}
		for _, v := range d.Values {
			values[d.Key][v] = true
		}
	}
	for i, ex := range m.Exclude {
		for _, k := range SortedKeys(ex) {
			if v := ex[k]; values[k] == nil {
				c.add("matrix.exclude", "entry %d: %q is not a key of this matrix (keys: %s)", i+1, k, strings.Join(c.e.Keys(), ", "))
			} else if !values[k][v] {
				c.add("matrix.exclude", "entry %d: %s=%s matches nothing (values of %s: %s)", i+1, k, v, k, listCut(c.e.ValuesOf(k)))
			}
		}
	}
	for k, v := range c.e.Baseline {
		if !c.e.varies(k) {
			c.add("baseline", "%q is not a key of this matrix (keys: %s)", k, strings.Join(c.e.Keys(), ", "))
		} else if !contains(c.e.ValuesOf(k), v) {
			c.add("baseline", "%s=%s is not in the matrix (values of %s: %s)", k, v, k, listCut(c.e.ValuesOf(k)))
		}
	}
}

func (c *checker) repetitions() {
	r := c.e.Repetitions
	if r.Min < 1 || r.Max > 1000 {
		c.add("repetitions", "%d is out of range (valid: 1 to 1000 runs per cell)", r.Min)
		return
	}
	if r.Adaptive() {
		if r.Min < 2 {
			c.add("repetitions.min", "%d: adaptive repetitions need min 2 or more to estimate an interval", r.Min)
		}
		if r.TargetCIHalfWidth == 0 && r.TargetEffect == 0 {
			c.add("repetitions", "adaptive repetitions need a target: targetCIHalfWidth (e.g. 2%%: each cell's mean within ±2 %%) or targetEffect (e.g. 3%%: each comparison able to detect a 3 %% overhead)")
		}
	} else if r.Max < r.Min {
		c.add("repetitions.max", "%d is below min %d", r.Max, r.Min)
	}
}

// Keys returns the matrix keys in file order (dims, then zipped keys).
func (e *Experiment) Keys() []string {
	var k []string
	for _, d := range e.Matrix.Dims {
		k = append(k, d.Key)
	}
	for _, d := range e.Matrix.Zip {
		k = append(k, d.Key)
	}
	return k
}

func (e *Experiment) varies(key string) bool { return contains(e.Keys(), key) }

// ValuesOf returns the values the matrix gives key.
func (e *Experiment) ValuesOf(key string) []string {
	for _, d := range append(append([]Dim{}, e.Matrix.Dims...), e.Matrix.Zip...) {
		if d.Key == key {
			return d.Values
		}
	}
	return nil
}

// needsRecords: a YCSB workload needs a record count (sysbench has tableSize, fio none).
func (e *Experiment) needsRecords() bool {
	if e.varies("workload") {
		for _, w := range e.Workloads {
			if w.Type == "ycsb" {
				return true
			}
		}
		return false
	}
	return e.Workload.Type == "ycsb"
}

func sortedNames(m map[string]*Workload) []string { return sortedKeys(m) }

func sortedKeys[V any](m map[string]V) []string {
	n := make([]string, 0, len(m))
	for k := range m {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// SortedKeys returns a map's keys sorted, for stable messages.
func SortedKeys(m map[string]string) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// listCut joins up to 20 values and says how many more there are: a message names what is
// valid without repeating a list of thousands.
func listCut(vs []string) string {
	if len(vs) <= 20 {
		return strings.Join(vs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(vs[:20], ", "), len(vs)-20)
}

// DefaultPairing is the pairing of a spec that names none: its order's (duets under duet).
func DefaultPairing(order string) string {
	if order == "duet" {
		return "duets"
	}
	return "none"
}

// pairing checks that the pairing fits the order: rounds are blocks only when every round runs
// each cell once in random order, duets only under order: duet (where they are the pairing).
func (c *checker) pairing() {
	e := c.e
	if !slices.Contains(Pairings, e.Pairing) {
		c.oneOf("pairing", e.Pairing, Pairings)
		return
	}
	switch {
	case e.Order == "duet" && e.Pairing != "duets":
		c.add("pairing", "%q under order: duet, whose runs are compared by duet: use pairing: duets (or leave it out)", e.Pairing)
	case e.Pairing == "duets" && e.Order != "duet":
		c.add("pairing", "duets needs order: duet (order is %q): use none or, under order: randomized, rounds", e.Order)
	case e.Pairing == "rounds" && e.Order != "randomized":
		c.add("pairing", "rounds needs order: randomized, where every round runs each cell once (order is %q, whose repetitions of a cell run one after another): use none", e.Order)
	}
}
