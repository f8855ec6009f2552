// Package cgroup puts boxes under resource limits and finds their control groups, on cgroup v1,
// hybrid and v2 hosts, behind one type: a Ref names a group, and callers create, read, limit,
// kill and remove through it without asking which layout the host has (as benchexec's Cgroups
// object does). Where the layout must reach a person (doctor, the stored environment), it is a
// value the package reports (HostMode, Version.String), not a branch in the caller.
//
// Layer (docs/architecture.md): OS plumbing — it talks to the host and imports only leaves
// (internal/resource); the spec and everything above may import it.
package cgroup

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/containerd/cgroups/v3"
)

// Version is a cgroup layout. Callers hold it as a value (a host's, or a fixture tree's) and
// ask it for facts; the branches on it live in this package and in telemetry's readers.
type Version int

const (
	V1 Version = 1 // legacy or hybrid: controllers mounted per hierarchy under /sys/fs/cgroup/<ctrl>
	V2 Version = 2 // unified: one hierarchy at /sys/fs/cgroup
)

// String names the layout for people: "v1" or "v2".
func (v Version) String() string { return "v" + strconv.Itoa(int(v)) }

// FSType is the filesystem type of the layout's hierarchies, "cgroup" (v1) or "cgroup2", which
// is also the word tools name their keys by (LXC's lxc.cgroup.* and lxc.cgroup2.*).
func (v Version) FSType() string {
	if v == V2 {
		return "cgroup2"
	}
	return "cgroup"
}

// Delegates reports whether a group's controllers must be enabled down the tree above it
// (cgroup.subtree_control, v2) for its files to exist; v1's hierarchies have no such step.
func (v Version) Delegates() bool { return v == V2 }

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

// Ref names one control group: its layout and its path relative to the hierarchy root
// (e.g. "/boxbench/quickstart/r12" or "/docker/<container id>"). The zero Ref names no group.
type Ref struct {
	v    Version
	path string
}

// At names the group at path on this host's layout.
func At(path string) Ref { return Ref{v: HostVersion(), path: path} }

// On names the group at path on a tree of layout v: a captured tree in a fixture test, or a
// guest's v2 tree read through a mirror.
func On(v Version, path string) Ref { return Ref{v: v, path: path} }

// Path is the group's path relative to the hierarchy root.
func (r Ref) Path() string { return r.path }

// Layout is the group's layout. It is for readers that parse a layout's own files (telemetry
// picks its parser by it, once) and for tests; limits, reads, kills and removal go through
// Ref's methods, which need no branch in the caller.
func (r Ref) Layout() Version { return r.v }

// Valid reports whether r has a known layout (the zero Ref has none).
func (r Ref) Valid() bool { return r.v == V1 || r.v == V2 }

// Child names the sub-group name of r.
func (r Ref) Child(name string) Ref { return Ref{v: r.v, path: r.path + "/" + name} }

// Dir returns the directory holding controller's files for this group. On V2 the controller is
// ignored (one hierarchy). On V1 it is the mount of that controller, e.g. "memory" or "cpu".
func (r Ref) Dir(controller string) string {
	if r.v == V2 {
		return filepath.Join(Root, r.path)
	}
	return filepath.Join(Root, controller, r.path)
}

// Dirs lists the group's directory in every hierarchy of its layout (one on v2; on v1 one per
// mounted hierarchy, unified included on a hybrid host), whether or not it exists.
func (r Ref) Dirs() []string { return groupDirs(r.v, r.path) }

// Exists reports whether the group exists (v1: in the memory hierarchy, where boxbench and the
// engines always create their groups).
func (r Ref) Exists() bool {
	_, err := os.Stat(r.Dir("memory"))
	return err == nil
}

// Children names the group's direct sub-groups (v1: those of its memory hierarchy). A group
// that does not exist has none.
func (r Ref) Children() []Ref {
	ents, _ := os.ReadDir(r.Dir("memory"))
	var out []Ref
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, r.Child(e.Name()))
		}
	}
	return out
}

// TakesShares reports whether the group's CPU weight file is v1's cpu.shares, so that a weight
// handed to an engine as shares (SharesOf, Docker's CPUShares) lands exactly; on v2 the runtime
// converts shares to cpu.weight by a formula of its own.
func (r Ref) TakesShares() bool { return r.v != V2 }

// String names the group for people and the run's facts: "cgroup v1 /boxbench/exp/r1".
func (r Ref) String() string { return "cgroup " + r.v.String() + " " + r.path }
