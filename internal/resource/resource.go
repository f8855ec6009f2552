// Package resource holds the one description of what a box may use: CPU bandwidth and cores,
// memory, CPU and I/O weights, and I/O limits. The runner puts it in every request, each
// platform applies it in its own terms (cgroup files, engine options, LXC keys, pod limits, VM
// vCPUs and RAM) and reads back what took effect into the same type, so requested and obtained
// can be compared field by field.
//
// The spec's `limits:` block is the file syntax of this type (sizes with units); spec.Limits
// converts to it.
//
// Layer (docs/architecture.md): a leaf — it imports no other package of boxbench, so any
// package may import it.
package resource

import (
	"fmt"
	"strings"
)

// Limits are the resources of one box. A zero field means "no limit" (or, for a weight, the
// kernel default). Weights use cgroup v2's scale (1–10000, default 100) on every host; platforms
// convert (cgroup v1 cpu.shares = w×1024/100, blkio weight = w×5 clamped to 10–1000).
type Limits struct {
	CPUs        float64 `json:"cpus,omitempty"`         // CPU bandwidth in cores (quota/period)
	Cpuset      string  `json:"cpuset,omitempty"`       // cores, e.g. "1" or "0-1"
	MemoryBytes int64   `json:"memory_bytes,omitempty"` // memory limit
	CPUWeight   int     `json:"cpu_weight,omitempty"`   // proportional CPU share
	IOWeight    int     `json:"io_weight,omitempty"`    // proportional block I/O share
	ReadBps     int64   `json:"read_bps,omitempty"`     // block I/O read limit, bytes/s, on the data device
	WriteBps    int64   `json:"write_bps,omitempty"`    // block I/O write limit, bytes/s
	ReadIOPS    int64   `json:"read_iops,omitempty"`    // block I/O read limit, operations/s
	WriteIOPS   int64   `json:"write_iops,omitempty"`   // block I/O write limit, operations/s
}

// HasIOMax says whether any absolute I/O limit is set.
func (l Limits) HasIOMax() bool { return l.ReadBps+l.WriteBps+l.ReadIOPS+l.WriteIOPS > 0 }

// Shares returns only the weights and I/O limits (the controls that matter between co-located
// boxes).
func (l Limits) Shares() Limits {
	return Limits{CPUWeight: l.CPUWeight, IOWeight: l.IOWeight, ReadBps: l.ReadBps, WriteBps: l.WriteBps,
		ReadIOPS: l.ReadIOPS, WriteIOPS: l.WriteIOPS}
}

// Basic returns only CPU bandwidth, cores and memory.
func (l Limits) Basic() Limits {
	return Limits{CPUs: l.CPUs, Cpuset: l.Cpuset, MemoryBytes: l.MemoryBytes}
}

// String renders the set fields for messages, e.g. "cpus=1 memory=536870912B io_weight=300".
func (l Limits) String() string {
	var p []string
	add := func(name string, v any, set bool) {
		if set {
			p = append(p, fmt.Sprintf("%s=%v", name, v))
		}
	}
	add("cpus", l.CPUs, l.CPUs > 0)
	add("cpuset", l.Cpuset, l.Cpuset != "")
	add("memory", fmt.Sprintf("%dB", l.MemoryBytes), l.MemoryBytes > 0)
	add("cpu_weight", l.CPUWeight, l.CPUWeight > 0)
	add("io_weight", l.IOWeight, l.IOWeight > 0)
	add("read_bps", l.ReadBps, l.ReadBps > 0)
	add("write_bps", l.WriteBps, l.WriteBps > 0)
	add("read_iops", l.ReadIOPS, l.ReadIOPS > 0)
	add("write_iops", l.WriteIOPS, l.WriteIOPS > 0)
	if len(p) == 0 {
		return "none"
	}
	return strings.Join(p, " ")
}

// Applied is what a platform reports after it applied a request: the limits read back from the
// source of truth (the kernel's cgroup files, the engine's inspect output, the pod's status, the
// guest's own view), where they were read, and how each control was applied in the platform's
// own terms. A requested control that is zero in Limits and has no entry in How was not applied;
// the platform says why in a warning.
type Applied struct {
	Limits Limits            `json:"limits"`
	From   string            `json:"from,omitempty"` // e.g. "cgroup v1 /boxbench/e/r"
	How    map[string]string `json:"how,omitempty"`  // control → what was written, e.g. "cpu_weight": "cpu.shares 2048"
}
