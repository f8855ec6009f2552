package spec

import (
	"sort"

	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/spec/section"
)

// Closed vocabularies of the spec itself. The vocabularies of the parts a build registers
// (databases, platforms with their storages and networks, workload kinds) come from a
// Vocabulary.
var (
	Mixes    = []string{"a", "b", "c", "d", "e", "f", "write-heavy", "read-heavy", "custom"}
	Bounds   = []string{"memory", "disk"}
	Orders   = []string{"randomized", "sequential", "duet"}
	Pairings = []string{"none", "rounds", "duets"}
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
	// Workloads are the kinds of workload this build runs (the table builtin/workloads), in
	// the order messages list them.
	Workloads []WorkloadKind
}

// WorkloadKind is what the spec needs of one kind of workload (a row of builtin/workloads):
// where it may run and the check of what only the kind knows.
type WorkloadKind struct {
	Name string
	// Measured: it can be a cell's measured workload (workload:, workloads:). Neighbour: it can
	// run inside a neighbour's box (neighbours.<name>.workload).
	Measured, Neighbour bool
	// Threads is the default of threads (0: 8); fio's is 1, its jobs each writing their own
	// file.
	Threads int
	// Records: a cell of the kind needs a data set of dataset.records or bound (ycsb's;
	// sysbench has its own tableSize, fio none).
	Records bool
	// Remote: the kind can run at a client site (a pinned boxbench agent, as a duet's client):
	// it needs nothing of the host but the endpoint (workload.Traits.Remote of what it builds).
	Remote bool
	// Sweeps are the sweep keys that apply to it (SweepKeys; workload.threads applies to
	// every kind).
	Sweeps []string
	// WholeSeconds: the kind counts duration, warm-up and interval in whole seconds.
	WholeSeconds bool
	// Own decodes and checks the kind's own section, the fields it takes that Workload has
	// not (spec/own.go); nil when it takes none of its own.
	Own *OwnKind
}

// workloadTypes are the names of the kinds that ok accepts, in the vocabulary's order.
func (v Vocabulary) workloadTypes(ok func(WorkloadKind) bool) []string {
	var out []string
	for _, k := range v.Workloads {
		if ok(k) {
			out = append(out, k.Name)
		}
	}
	return out
}

// DefaultType is the type of a workload that names none: the first measured kind.
func (v Vocabulary) DefaultType() string {
	if types := v.MeasuredTypes(); len(types) > 0 {
		return types[0]
	}
	return ""
}

// MeasuredTypes are the values of workload.type; NeighbourTypes of a neighbour's.
func (v Vocabulary) MeasuredTypes() []string {
	return v.workloadTypes(func(k WorkloadKind) bool { return k.Measured })
}

func (v Vocabulary) NeighbourTypes() []string {
	return v.workloadTypes(func(k WorkloadKind) bool { return k.Neighbour })
}

// remoteTypes are the kinds that can run at a client site.
func (v Vocabulary) remoteTypes() []string {
	return v.workloadTypes(func(k WorkloadKind) bool { return k.Measured && k.Remote })
}

// owns says whether w's kind takes field (its own section's, OwnKind.Fields).
func (v Vocabulary) owns(w *Workload, field string) bool {
	k := v.workloadKind(w.Type)
	return k.Own != nil && contains(k.Own.Fields, field)
}

// owners are the kinds that take field, in the vocabulary's order.
func (v Vocabulary) owners(field string) []string {
	return v.workloadTypes(func(k WorkloadKind) bool {
		return k.Own != nil && contains(k.Own.Fields, field)
	})
}

// kindFields are the fields some kind takes, sorted.
func (v Vocabulary) kindFields() []string {
	seen := map[string]bool{}
	for _, k := range v.Workloads {
		if k.Own != nil {
			for _, f := range k.Own.Fields {
				seen[f] = true
			}
		}
	}
	return sortedKeys(seen)
}

// workloadKind is the kind named name (the zero kind when there is none).
func (v Vocabulary) workloadKind(name string) WorkloadKind {
	for _, k := range v.Workloads {
		if k.Name == name {
			return k
		}
	}
	return WorkloadKind{}
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
