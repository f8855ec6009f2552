// Package platform provisions boxes: a database server started under one operational model
// (a host process, a container, later a VM, LXC, Swarm or Kubernetes) with the storage,
// network, runtime and limits a cell asks for.
package platform

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/boxbench/boxbench/cgroup"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/telemetry"
)

// Limits are the resources a box may use. Zero values mean "no limit".
type Limits struct {
	CPUs        float64 `json:"cpus,omitempty"`         // CPU bandwidth in cores (quota/period)
	Cpuset      string  `json:"cpuset,omitempty"`       // cores, e.g. "1" or "0-1"
	MemoryBytes int64   `json:"memory_bytes,omitempty"` // memory limit
}

// String renders limits for messages.
func (l Limits) String() string {
	var p []string
	if l.CPUs > 0 {
		p = append(p, fmt.Sprintf("cpus=%g", l.CPUs))
	}
	if l.Cpuset != "" {
		p = append(p, "cpuset="+l.Cpuset)
	}
	if l.MemoryBytes > 0 {
		p = append(p, fmt.Sprintf("memory=%dB", l.MemoryBytes))
	}
	if len(p) == 0 {
		return "none"
	}
	return strings.Join(p, " ")
}

// AppliedLimits reads the limits in effect from a box's own cgroup files (quota/period, cpuset,
// memory limit), so what a platform asked for can be checked against what the kernel holds.
func AppliedLimits(ref cgroup.Ref) (Limits, error) {
	l, err := telemetry.ReadLimits(ref)
	return Limits{CPUs: l.CPUs, Cpuset: l.Cpuset, MemoryBytes: l.MemoryBytes}, err
}

// Choice is the part of a cell a platform must support.
type Choice struct {
	Storage string
	Network string
	Runtime string
}

// Request asks for one box.
type Request struct {
	Experiment string // experiment id: labels, cgroup and directory names
	Run        string // run id, unique within the experiment
	WorkDir    string // a host directory reserved for this box; teardown removes it
	DBMS       dbms.DBMS
	Choice
	Limits      Limits
	StorageOpts StorageOptions
	// Seed is a host directory holding a cleanly stopped data directory to restore into the
	// box's storage; "" initialises an empty data directory.
	Seed string
	Log  *slog.Logger
}

// StorageOptions tune the storage backends that need it.
type StorageOptions struct {
	BlockdevFS     string // "ext4" (default) or "xfs"
	BlockdevSize   int64  // bytes of the loop file; 0 = default
	BlockdevDevice string // a device the user names instead of a loop file (it is reformatted)
	TmpfsSize      int64  // bytes; 0 = default
}

// Box is one provisioned database server.
//
// Contract: a Box returned by Provision is running and ready. Teardown is idempotent and safe
// after any failure, from any goroutine, and removes everything the box created. Other methods
// must not be called after Teardown.
type Box interface {
	// Endpoint is where the client (on the host) reaches the server.
	Endpoint() driver.Endpoint
	// Cgroup is the control group the server runs in.
	Cgroup() cgroup.Ref
	// DataDir is the data directory as the server sees it.
	DataDir() string
	// Applied returns the limits read back from the cgroup files after start.
	Applied() Limits
	// Facts describe the box for the stored environment: storage backing and mount options,
	// restore method, image, runtime, the exact server command.
	Facts() map[string]string
	// Exec runs argv inside the box (same cgroup and mount view as the server) as root.
	Exec(ctx context.Context, argv []string) ([]byte, error)
	// LogTail returns up to n bytes of the end of the server's log.
	LogTail(n int) string
	// Stop shuts the server down cleanly; its data stays for Capture.
	Stop(ctx context.Context) error
	// Capture copies the stopped server's data directory to the host directory dst.
	Capture(ctx context.Context, dst string) error
	// Teardown stops everything and removes what the box created.
	Teardown(ctx context.Context) error
}

// Platform is one operational model.
type Platform interface {
	Name() string
	// Check says why this host cannot run c on this platform (nil when it can). It must not
	// start anything; probes that need a real container are run by Probe.
	Check(ctx context.Context, c Choice) error
	// Provision creates, starts and waits for a box. On error it has already removed whatever it
	// created, and the error carries the server's log tail when the server did start.
	Provision(ctx context.Context, r Request) (Box, error)
	// Cleanup removes leftovers of experiments whose ids pass keep==false (crashed ones):
	// processes, cgroups, containers, volumes, mounts, loop devices. It returns what it removed.
	Cleanup(ctx context.Context, workRoot string, crashed func(experiment string) bool) ([]string, error)
}

// Prober is implemented by platforms whose abilities need a real trial (e.g. a runtime that is
// registered but fails on this kernel).
type Prober interface {
	// Probe tries runtime for real, bounded in time, and returns the engine's own error.
	Probe(ctx context.Context, c Choice) error
}

// Finding is one line of `boxbench doctor`.
type Finding struct {
	Area   string // "host", "tools", "dbms", or a platform name
	Name   string
	OK     bool
	Detail string // what was found (a version, the engine's own error)
	Fix    string // the command that fixes it, when there is one
}

// Diagnoser is implemented by platforms that can say what they can do on this host.
type Diagnoser interface {
	Diagnose(ctx context.Context) []Finding
}
