package platform

import "github.com/boxbench/boxbench/cgroup"

// Observation tells telemetry how a box can be seen from the host. Any subset may be set.
type Observation struct {
	// Cgroup is the box's control group on this host's tree (its CPU, memory, I/O, pressure);
	// nil when the box is not a group here (a pod on another node, a VM guest's processes).
	Cgroup *cgroup.Ref
	// PID is a host process that stands for the box (a VMM: its CPU time and memory), 0 when none.
	PID int
	// DataDir is the host path of the data directory (the I/O of its block device); "" when the
	// data is not on this host's filesystem tree.
	DataDir string
	// Missing says what cannot be observed and why, e.g. "guest memory: seen only as the VMM's
	// resident set". Telemetry records it with the run.
	Missing []string
}

// Warning is a doubt about a box that the run records: a control that could not be enforced,
// a version difference, an emulated machine.
type Warning struct {
	Code    string // snake_case, stable: what the report groups by
	Message string // a sentence a user can act on
}
