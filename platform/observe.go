package platform

import (
	"context"
	"time"

	"github.com/boxbench/boxbench/internal/cgroup"
)

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
	// Guest is the box's own view from inside, when it has one (a VM guest); nil otherwise.
	Guest *GuestView
	// Stats is the box's values as its orchestrator reports them, for a box this host cannot
	// read itself (a pod on another node: its kubelet's summary API); nil otherwise.
	Stats *StatsView
	// Parts finds the processes that work for the box beside its server (Part), on this host;
	// nil when the platform has none to name. Called once a run, after the box is up and
	// before the measured window; it reads the host and starts nothing.
	Parts func(ctx context.Context) ([]Part, error)
	// Missing says what cannot be observed and why, e.g. "guest memory: seen only as the VMM's
	// resident set". Telemetry records it with the run.
	Missing []string
}

// Part is a process, or some threads of one, that works for a box, found from the box itself
// (its container's parent, the proxy of its own published port, its VMM's vCPU threads), never
// by a process name alone.
type Part struct {
	// Component names what it is, [a-z0-9-]: "containerd-shim", "docker-proxy",
	// "runsc-sentry", "runsc-gofer", "lxc-monitor", "qemu-vcpu", "qemu-io".
	Component string
	PID       int
	// Threads, when set, restricts the part to these threads of PID.
	Threads []int
	// InGroup says the part runs inside Observation.Cgroup: its CPU is the box's machinery,
	// carved out of the server's.
	InGroup bool
}

// FactEmulated is the fact ("true") of a box whose CPU is emulated in software (a VM under
// QEMU's TCG), for people; what decides is the box's Traits().Emulated.
const FactEmulated = "emulated"

// Warning is a doubt about a box that the run records: a control that could not be enforced,
// a version difference, an emulated machine.
type Warning struct {
	Code    string // snake_case, stable: what the report groups by
	Message string // a sentence a user can act on
}

// GuestView is how a box with a kernel of its own (a VM guest) is seen from inside: its /proc
// and its server's control group, read through the platform's channel into the guest.
type GuestView struct {
	// Sample reads the guest's files at once and returns each as a line "==> PATH <==" followed
	// by its content: /proc/stat, /proc/meminfo, /proc/vmstat, /proc/loadavg, /proc/diskstats,
	// /proc/pressure/*, and the files of Group.
	Sample func(ctx context.Context) ([]byte, error)
	// Group is the server's cgroup v2 directory in the guest, e.g. "/sys/fs/cgroup/boxbench/server".
	Group string
}

// StatsView is a box's values as something other than this host's kernel reports them.
type StatsView struct {
	// Via names the source, e.g. "kubelet summary API of node n1 (container server)".
	Via string
	// Read returns the box's values under the metric names of a control group
	// (telemetry.Metrics): cumulative counters named "*_total" (seconds, bytes, events) and
	// gauges, and the time the source computed them, which may be older than the call; no
	// values and a zero time when the source has none for the box yet. It honours ctx.
	Read func(ctx context.Context) (map[string]float64, time.Time, error)
}
