package docker

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

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

// Leftovers: platform.LeftoverLister. The engine's containers, networks and volumes labelled
// with experiment exp (swarm's services are the swarm platform's).
func (p *Platform) Leftovers(ctx context.Context, _, exp string) ([]string, error) {
	return EngineLeftovers(ctx, p.engine, exp)
}

// EngineLeftovers lists engine's containers (running or not), networks and volumes labelled
// with experiment exp; the error names the lists the engine did not give.
func EngineLeftovers(ctx context.Context, engine client.APIClient, exp string) ([]string, error) {
	f := filters.NewArgs(filters.Arg("label", LabelExperiment+"="+exp))
	var left []string
	cs, err1 := engine.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	for _, c := range cs {
		left = append(left, "container "+firstName(c.Names, c.ID))
	}
	ns, err2 := engine.NetworkList(ctx, network.ListOptions{Filters: f})
	for _, n := range ns {
		left = append(left, "network "+n.Name)
	}
	vs, err3 := engine.VolumeList(ctx, volume.ListOptions{Filters: f})
	for _, v := range vs.Volumes {
		left = append(left, "volume "+v.Name)
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		return left, fmt.Errorf("list the engine's objects of %s: %w", exp, err)
	}
	return left, nil
}

func firstName(names []string, id string) string {
	if len(names) > 0 {
		return strings.TrimPrefix(names[0], "/")
	}
	return id
}
