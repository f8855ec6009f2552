// Package spec reads experiment files (apiVersion boxbench/v1alpha1) into a validated model.
// Unknown fields are errors; every problem in a file is reported at once, each with its line,
// the field, the bad value and what would be valid. docs/spec.md documents every field.
package spec

import (
	"encoding/json"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/spec/published"
	"github.com/boxbench/boxbench/spec/section"
)

// APIVersion is the only version this package reads.
const APIVersion = "boxbench/v1alpha1"

// Experiment is one spec file.
type Experiment struct {
	APIVersion     string                `yaml:"apiVersion"`
	Kind           string                `yaml:"kind"`
	Name           string                `yaml:"name"`
	Description    string                `yaml:"description"`
	DBMS           string                `yaml:"dbms"`
	Workload       Workload              `yaml:"workload"`
	Workloads      map[string]*Workload  `yaml:"workloads"`
	Neighbours     map[string]*Neighbour `yaml:"neighbours"`
	Dataset        Dataset               `yaml:"dataset"`
	Limits         Limits                `yaml:"limits"`
	Placement      Placement             `yaml:"placement"`
	StorageOptions StorageOptions        `yaml:"storageOptions"`
	Matrix         Matrix                `yaml:"matrix"`
	Repetitions    Repetitions           `yaml:"repetitions"`
	Order          string                `yaml:"order"`
	// Pairing is how a cell's runs are compared with its baseline's for the overhead, its
	// interval and the verdict: "none" (the default under randomized and sequential: the two
	// cells' runs as two samples), "rounds" (order: randomized only: each run's ratio to the
	// baseline's run of the same round, every round holding each cell once in random order, so
	// what drifts between rounds cancels) or "duets" (order: duet's, and its default).
	Pairing   string            `yaml:"pairing"`
	Seed      *int64            `yaml:"seed"`
	Baseline  map[string]string `yaml:"baseline"`
	Telemetry Telemetry         `yaml:"telemetry"`
	Timeouts  Timeouts          `yaml:"timeouts"`
	// EmulatedVerdicts asks for verdicts on comparisons with emulated boxes (a VM under QEMU's TCG),
	// which by default carry none: their differences are the emulator's.
	EmulatedVerdicts bool `yaml:"emulatedVerdicts"`
	// QuietStart: before each run's workload, wait (bounded) until the host's CPUs and disks
	// are idle. SteadyState: how the measured window's start is fixed ("mser", the default, or
	// "off"). Cache: "warm" (default) or "cold" (the page cache is dropped before each run).
	QuietStart  QuietStart `yaml:"quietStart"`
	SteadyState string     `yaml:"steadyState"`
	Cache       string     `yaml:"cache"`
	// Client is where the load generator runs (spec/client.go).
	Client Client `yaml:"client"`
	// Topology runs the database as a cluster of boxes (spec/topology.go).
	Topology *Topology `yaml:"topology"`
	// Published is what the study this experiment reproduces found (studies/, docs/studies.md):
	// the report sets this host's estimate beside each effect.
	Published *published.Published `yaml:"published"`

	// Raw holds the top-level keys spec has no field for: platforms' sections (kubernetes:),
	// which decodeSections hands to their decoders, or mistakes it reports. Sections are what
	// those decoders returned, by key: what builtin.Configure configures each platform with.
	Raw      map[string]yaml.Node `yaml:",inline" json:"-"`
	Sections map[string]Decoded   `yaml:"-" json:"-"`

	lines  map[string]int       // field path → line, for semantic errors
	fields map[lineValue]string // (line, scalar value) → field path, to name the field of a decode error
	vocab  Vocabulary           // what this build offers
}

// Workload is what the client does: the fields every kind shares; a kind's own section, which
// its row decodes, is Own.
type Workload struct {
	Type     string   `yaml:"type"`
	Threads  int      `yaml:"threads"`
	Duration Duration `yaml:"duration"`
	Warmup   Duration `yaml:"warmup"`
	Interval Duration `yaml:"interval"`

	// Own is the kind's own section, what its row decoded from the keys Workload has no field
	// for (WorkloadKind.Own, spec/own.go); nil for a kind without one. Rest holds those keys
	// as read; ownJSON the section as an agent's job carried it, until DecodeOwn.
	Own     Own                  `yaml:"-" json:"-"`
	Rest    map[string]yaml.Node `yaml:",inline" json:"-"`
	ownJSON json.RawMessage
}

// WorkloadOf returns the workload a cell runs: the named one of Workloads when the matrix
// varies "workload", else the top-level one.
func (e *Experiment) WorkloadOf(name string) *Workload {
	if w, ok := e.Workloads[name]; ok {
		return w
	}
	return &e.Workload
}

// Dataset sizes the data. Either Records, or Bound relative to limits.memory.
type Dataset struct {
	Records     int64  `yaml:"records"`
	FieldCount  int    `yaml:"fieldCount"`
	FieldLength int    `yaml:"fieldLength"`
	Bound       string `yaml:"bound"`
}

// Limits every box gets, native included: the file syntax (sizes with units) of
// resource.Limits, which Resources returns. Weights use cgroup v2's scale (1–10000, default
// 100) on every host; on cgroup v1 they are converted (cpu.shares = w×1024/100,
// blkio weight = w×5 clamped to 10–1000).
type Limits struct {
	CPUs      float64 `yaml:"cpus"`
	Cpuset    string  `yaml:"cpuset"`
	Memory    Bytes   `yaml:"memory"`
	CPUWeight int     `yaml:"cpuWeight"`
	IOWeight  int     `yaml:"ioWeight"`
	ReadBps   Bytes   `yaml:"readBps"`
	WriteBps  Bytes   `yaml:"writeBps"`
	ReadIOPS  int64   `yaml:"readIops"`
	WriteIOPS int64   `yaml:"writeIops"`
}

// Resources converts the limits to the one type every platform applies and reads back.
func (l Limits) Resources() resource.Limits {
	return resource.Limits{CPUs: l.CPUs, Cpuset: l.Cpuset, MemoryBytes: int64(l.Memory), CPUWeight: l.CPUWeight,
		IOWeight: l.IOWeight, ReadBps: int64(l.ReadBps), WriteBps: int64(l.WriteBps), ReadIOPS: l.ReadIOPS, WriteIOPS: l.WriteIOPS}
}

// SortedNeighbours returns the names of e's neighbours that have a definition, sorted.
func SortedNeighbours(e *Experiment) []string {
	var out []string
	for _, n := range sortedKeys(e.Neighbours) {
		if e.Neighbours[n] != nil {
			out = append(out, n)
		}
	}
	return out
}

// Neighbour is a co-located box that runs its own workload while the measured database runs:
// started after the database is ready, stopped at the end of the measured window.
type Neighbour struct {
	Workload Workload `yaml:"workload"` // type fio (a preset or job map) or stress (cpu / memory hog)
	Platform string   `yaml:"platform"` // default: the cell's platform
	// Storage: "same" (default) gives the neighbour storage of the victim's kind — for bind its
	// own directory on the same host filesystem, for blockdev its own filesystem; "shared" a
	// directory on the victim's own file system (its journal shared, whatever its kind);
	// or name any storage kind.
	Storage string `yaml:"storage"`
	Limits  Limits `yaml:"limits"`
}

// Placement says where the experiment's processes run, the same for every cell: Client pins
// the client (boxbench's load generator) to cores, Server gives every database box that cpuset
// (through its limits, on every platform), Neighbours every neighbour box; the three are
// disjoint. ClientPolicy is the client's scheduling policy during the measured window
// ("normal", the default, or "idle"; see package placement).
type Placement struct {
	Client       string `yaml:"client"`
	ClientPolicy string `yaml:"clientPolicy"`
	Server       string `yaml:"server"`
	Neighbours   string `yaml:"neighbours"`
	// Duet is order: duet's layout (placement.DuetLayouts); "" chooses by the cpu count.
	Duet string `yaml:"duet"`
}

// QuietStart bounds the wait for an idle host before each run. Timeout 0 turns it off.
type QuietStart struct {
	// Timeout is the longest wait; the run then starts anyway, with a warning.
	Timeout Duration `yaml:"timeout"`
	// CPUBusy is the largest share of the host's CPU time (all modes but idle and iowait)
	// that counts as idle; DiskBusy the largest share of time any disk may be busy.
	CPUBusy  Percent `yaml:"cpuBusy"`
	DiskBusy Percent `yaml:"diskBusy"`
	// Window is how long the host must stay under both to count as quiet.
	Window Duration `yaml:"window"`
}

// StorageOptions tune storage backends.
type StorageOptions struct {
	Blockdev BlockdevOptions `yaml:"blockdev"`
	Tmpfs    TmpfsOptions    `yaml:"tmpfs"`
}

// BlockdevOptions: the dedicated filesystem of storage=blockdev.
type BlockdevOptions struct {
	FS     string `yaml:"fs"`
	Size   Bytes  `yaml:"size"`
	Device string `yaml:"device"`
	// Wipe agrees to lose a filesystem (or other signature) found on Device; without it such a
	// device is refused.
	Wipe bool `yaml:"wipe"`
}

// TmpfsOptions: the size of storage=tmpfs.
type TmpfsOptions struct {
	Size Bytes `yaml:"size"`
}

// Repetitions: a fixed count, or adaptive bounds.
type Repetitions struct {
	Min               int     `yaml:"min"`
	Max               int     `yaml:"max"`
	TargetCIHalfWidth Percent `yaml:"targetCIHalfWidth"`
	// TargetEffect adds runs until each cell's comparison with its baseline could detect an
	// overhead this large (its minimum detectable effect at α = 0.05, 80 % power).
	TargetEffect Percent `yaml:"targetEffect"`
}

// Adaptive reports whether runs are added until the CI is narrow enough.
func (r Repetitions) Adaptive() bool { return r.Max > r.Min }

// Telemetry sampling.
type Telemetry struct {
	Interval Duration `yaml:"interval"`
}

// Timeouts bound each phase of a run.
type Timeouts struct {
	Provision Duration `yaml:"provision"`
	Load      Duration `yaml:"load"`
}

// Matrix is the cartesian product of Dims, plus zipped groups, minus exclusions.
type Matrix struct {
	Dims    []Dim               // in file order
	Zip     []Dim               // varied together, index by index
	Exclude []map[string]string // cells matching every key of one entry are dropped
}

// Dim is one matrix key and its values.
type Dim struct {
	Key    string
	Values []string
	Line   int
}

// Duration is a time.Duration written as "20s", "1m30s".
type Duration time.Duration

// D returns the standard duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Bytes is a size written with binary units: "512MiB", "2GiB", or a plain byte count (package
// section, where the kinds' own sections take it too).
type Bytes = section.Bytes

// Percent is a fraction written as "2%" or 0.02.
type Percent float64
