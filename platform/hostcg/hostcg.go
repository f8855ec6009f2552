// Package hostcg applies the resources that platforms with boxes on this host's cgroup tree
// (native, docker, lxc) have in common, in the terms of the cgroup files: weights and I/O
// limits on the data directory's device, and the read-back of every control from the kernel.
// CPU bandwidth, cpuset and memory are each platform's own business (cgroup.Create, engine
// options, LXC keys); the read-back here covers them too.
package hostcg

import (
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/internal/blockdev"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
)

// Device returns "major:minor" of the block device holding the host directory dir ("" when it
// has none, e.g. a tmpfs, or when dir is "").
func Device(dir string) string {
	if dir == "" {
		return ""
	}
	dev, err := blockdev.Resolve(dir)
	if err != nil {
		return ""
	}
	return cgroup.DeviceOf(dev.Major, dev.Minor)
}

// Apply writes the weights and I/O limits of req into ref (on cgroup v1 also the rule that makes
// block I/O counted), then reads every control back from the kernel. how records how each
// control was applied by the caller (e.g. "memory": "lxc.cgroup.memory.limit_in_bytes"); Apply
// adds its own. A control this host cannot enforce becomes a warning, not an error; the error
// is for a group whose limits cannot be read at all.
func Apply(ref cgroup.Ref, req resource.Limits, device string, how map[string]string) (resource.Applied, []platform.Warning, error) {
	a := resource.Applied{From: ref.String(), How: maps.Clone(how)}
	if a.How == nil {
		a.How = map[string]string{}
	}
	var warns []platform.Warning
	done, err := ref.ApplyShares(req.Shares(), device)
	for _, k := range slices.Sorted(maps.Keys(done)) {
		v := done[k]
		a.How[k] = v
		if strings.HasPrefix(v, "not ") {
			warns = append(warns, platform.Warning{Code: k + "_not_enforced", Message: k + " " + v})
		}
	}
	if err != nil {
		warns = append(warns, platform.Warning{Code: "shares_failed", Message: "applying weights or I/O limits failed: " + err.Error()})
	}
	back, err := ref.ReadLimits()
	if err != nil {
		return a, warns, err
	}
	io, err := ref.ReadIOMax(device)
	if err != nil {
		return a, warns, err
	}
	back.ReadBps, back.WriteBps, back.ReadIOPS, back.WriteIOPS = io.ReadBps, io.WriteBps, io.ReadIOPS, io.WriteIOPS
	a.Limits = back
	return a, warns, nil
}

// Observation is what the host sees of a box that is the group ref with its data in the host
// directory dataDir.
func Observation(ref cgroup.Ref, dataDir string) platform.Observation {
	o := platform.Observation{Cgroup: &ref, DataDir: dataDir}
	if dataDir == "" {
		o.Missing = append(o.Missing, "data device I/O: the data directory is not visible on the host")
	}
	return o
}

// RemoveEmptyExperimentGroups removes /boxbench/<experiment> of every crashed experiment that
// has a work directory under workRoot, when no process is left in it, and says which it removed.
func RemoveEmptyExperimentGroups(workRoot string, crashed func(string) bool) []string {
	var done []string
	exps, _ := os.ReadDir(workRoot)
	for _, e := range exps {
		if !e.IsDir() || !crashed(e.Name()) {
			continue
		}
		ref := cgroup.At("/boxbench/" + e.Name())
		if !ref.Exists() {
			continue
		}
		if pids, _ := ref.Pids(); len(pids) == 0 && ref.Remove() == nil {
			done = append(done, "cgroup "+ref.Path())
		}
	}
	return done
}
