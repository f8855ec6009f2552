package docker

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/boxbench/boxbench/internal/cgroup"
)

// containerIDRe is the shape of a container's full id.
var containerIDRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// strayKillTimeout bounds the wait for a killed runtime process to leave its group.
const strayKillTimeout = 10 * time.Second

// strayGroups are the control groups the engine makes for container id under its default
// parent: "/docker/<id>" with the cgroupfs driver, "/system.slice/docker-<id>.scope" with
// systemd's. boxbench sets no cgroup parent on its containers, so one of these is the group of
// every container it creates, named by the container's full id.
func strayGroups(id string) []cgroup.Ref {
	return []cgroup.Ref{cgroup.At("/docker/" + id), cgroup.At("/system.slice/docker-" + id + ".scope")}
}

// killStray kills what a removed container left running in its own control group: some
// runtimes leave processes behind after the engine has forgotten the container (gVisor's runsc,
// on a host where its sandbox cannot start, left its gofer and sandbox; runsc starts both inside
// the container's group, the one the engine named in the container's OCI spec). Only processes
// in that group and its sub-groups are signalled, found by pid from the group's own list: the
// kernel's record of what the runtime started for this container. A process is never matched
// by its command line (an operator's `tail -F` of the container's log names its id too). It
// returns the pids it killed; the error names a group whose processes survived.
func killStray(id string) ([]int, error) {
	if !containerIDRe.MatchString(id) {
		return nil, nil
	}
	var killed []int
	var errs []error
	for _, top := range strayGroups(id) {
		for _, ref := range subtree(top) {
			pids, err := ref.Pids()
			if err != nil || len(pids) == 0 {
				continue
			}
			if err := ref.Kill(strayKillTimeout); err != nil {
				errs = append(errs, fmt.Errorf("the removed container's group %s: %w", ref.Path(), err))
			}
			killed = append(killed, pids...)
		}
	}
	return killed, errors.Join(errs...)
}

// subtree is ref and every group below it (deepest first), as the memory hierarchy (v1) or the
// unified one (v2) shows them; none when ref does not exist.
func subtree(ref cgroup.Ref) []cgroup.Ref {
	if !ref.Exists() {
		return nil
	}
	var refs []cgroup.Ref
	for _, c := range ref.Children() {
		refs = append(refs, subtree(c)...)
	}
	return append(refs, ref)
}
