// Package cgroup puts boxes under resource limits and finds their control groups, on cgroup v1,
// hybrid and v2 hosts, behind one interface.
//
// Layer (docs/architecture.md): OS plumbing — it talks to the host and imports only leaves
// (internal/resource); the spec and everything above may import it.
package cgroup

import (
	"path/filepath"

	"github.com/containerd/cgroups/v3"
)

// Version is the cgroup layout of a host.
type Version int

const (
	V1 Version = 1 // legacy or hybrid: controllers mounted per hierarchy under /sys/fs/cgroup/<ctrl>
	V2 Version = 2 // unified: one hierarchy at /sys/fs/cgroup
)

// Root is where cgroup hierarchies are mounted. A variable only so fixture tests can point it
// at a captured tree.
var Root = "/sys/fs/cgroup"

// HostVersion reports the layout this host's controllers use. A hybrid host (v1 controllers
// plus an empty v2 mount) counts as V1 because that is where the controllers are.
func HostVersion() Version {
	if cgroups.Mode() == cgroups.Unified {
		return V2
	}
	return V1
}

// HostMode names the host's layout as the kernel presents it: "v1", "hybrid" or "v2".
func HostMode() string {
	switch cgroups.Mode() {
	case cgroups.Unified:
		return "v2"
	case cgroups.Hybrid:
		return "hybrid"
	case cgroups.Legacy:
		return "v1"
	}
	return "unavailable"
}

// Ref names one control group: its version and its path relative to the hierarchy root
// (e.g. "/boxbench/quickstart/r12" or "/docker/<container id>").
type Ref struct {
	Version Version `json:"version"`
	Path    string  `json:"path"`
}

// Dir returns the directory holding controller's files for this group. On V2 the controller is
// ignored (one hierarchy). On V1 it is the mount of that controller, e.g. "memory" or "cpu".
func (r Ref) Dir(controller string) string {
	if r.Version == V2 {
		return filepath.Join(Root, r.Path)
	}
	return filepath.Join(Root, controller, r.Path)
}
