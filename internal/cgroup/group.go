package cgroup

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/boxbench/boxbench/internal/resource"
)

// CFSPeriod is the CPU bandwidth period boxbench uses (the kernel's and Docker's default).
const CFSPeriod = 100000

// Group is a control group boxbench created. Delete is idempotent.
type Group struct {
	Ref Ref
	v1  cgroup1.Cgroup
	v2  *cgroup2.Manager
}

// Create makes the group at path (e.g. "/boxbench/exp/run") with the CPU bandwidth, cpuset and
// memory limits of l applied, on whatever layout the host has. Weights and I/O limits need the
// data device and go through ApplyShares.
func Create(path string, l resource.Limits) (*Group, error) {
	g := &Group{Ref: At(path)}
	treeMu.Lock()
	defer treeMu.Unlock()
	var err error
	if g.Ref.v == V2 {
		// Delegate every controller down boxbench's subtree first: the library enables only
		// those it sets limits for, so io.max and io.weight would have no files.
		if err := prepareV2(path); err != nil {
			return nil, fmt.Errorf("create cgroup %s: %w", path, err)
		}
		g.v2, err = cgroup2.NewManager(Root, path, cgroup2.ToResources(resources(l)))
	} else {
		noteParentsV1(path)
		g.v1, err = cgroup1.New(cgroup1.StaticPath(path), resources(l))
	}
	if err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w", path, err)
	}
	return g, nil
}

func resources(l resource.Limits) *specs.LinuxResources {
	r := &specs.LinuxResources{CPU: &specs.LinuxCPU{}, Memory: &specs.LinuxMemory{}}
	if l.CPUs > 0 {
		q, p := int64(l.CPUs*CFSPeriod), uint64(CFSPeriod)
		r.CPU.Quota, r.CPU.Period = &q, &p
	}
	r.CPU.Cpus = l.Cpuset
	if l.MemoryBytes > 0 {
		m := l.MemoryBytes
		r.Memory.Limit = &m
	}
	return r
}

// ProcsFiles are the cgroup.procs files a process writes its pid into to join the group in
// every hierarchy (one on v2).
func (g *Group) ProcsFiles() []string {
	if g.v2 != nil {
		return []string{g.Ref.Dir("") + "/cgroup.procs"}
	}
	var files []string
	for _, s := range g.v1.Subsystems() {
		dir := g.Ref.Dir(string(s.Name()))
		if _, err := os.Stat(dir + "/cgroup.procs"); err == nil {
			files = append(files, dir+"/cgroup.procs")
		}
	}
	return files
}

// Pids lists the processes in the group.
func (g *Group) Pids() ([]int, error) { return g.Ref.Pids() }

// Pids lists the processes in the group (v1: its memory hierarchy); none when it does not exist.
func (ref Ref) Pids() ([]int, error) {
	ctrl := "memory"
	b, err := os.ReadFile(ref.Dir(ctrl) + "/cgroup.procs")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids, nil
}

// Kill sends SIGKILL to every process in the group and waits up to timeout for the
// group to empty. Only processes inside a boxbench group are ever signalled.
func (ref Ref) Kill(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids, err := ref.Pids()
		if err != nil || len(pids) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: processes %v survived SIGKILL", ref.path, pids)
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Delete kills what is left in the group and removes it, then its parents that are boxbench's
// and empty (the experiment's group; /boxbench when this process created it). Idempotent.
func (g *Group) Delete() error {
	if err := g.Ref.Kill(10 * time.Second); err != nil {
		return err
	}
	if err := g.Ref.Remove(); err != nil {
		return err
	}
	treeMu.Lock()
	defer treeMu.Unlock()
	removeParents(g.Ref.path, func(p string) []string { return groupDirs(g.Ref.v, p) })
	return nil
}

// Remove removes the (empty) group and its empty sub-groups in every hierarchy.
// A group that does not exist is not an error.
func (ref Ref) Remove() error {
	var dirs []string
	if ref.v == V2 {
		dirs = []string{ref.Dir("")}
	} else {
		ents, err := os.ReadDir(Root)
		if err != nil {
			return err
		}
		for _, e := range ents {
			// "unified" is the empty v2 hierarchy of a hybrid host: LXC mirrors its groups there.
			if e.IsDir() {
				dirs = append(dirs, ref.Dir(e.Name()))
			}
		}
	}
	var errs []error
	for _, d := range dirs {
		if err := removeTree(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeTree removes a cgroup directory bottom-up (cgroup directories are removed with rmdir,
// never recursively unlinked).
func removeTree(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := removeTree(dir + "/" + e.Name()); err != nil {
				return err
			}
		}
	}
	for i := 0; ; i++ {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || i > 50 {
			return fmt.Errorf("remove cgroup %s: %w", dir, err)
		}
		time.Sleep(20 * time.Millisecond) // the kernel releases a group shortly after its last task exits
	}
}
