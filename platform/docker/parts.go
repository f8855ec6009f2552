package docker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/internal/proctree"
	"github.com/boxbench/boxbench/platform"
)

func (b *box) parts(ctx context.Context) ([]platform.Part, error) {
	b.mu.Lock()
	id := b.id
	b.mu.Unlock()
	return b.p.ContainerParts(ctx, id)
}

// ContainerParts finds the processes that work for container id, from the container itself:
// the engine's State.Pid is the server (runc) or gVisor's sandbox (the Sentry; the Gofer is
// its sibling); the shim is its parent; a docker-proxy serves the container when its
// -container-ip is one of the container's addresses. Nothing is found for an engine whose
// processes are not this host's (State.Pid is no process here whose groups name the
// container: an engine in another pid namespace).
func (p *Platform) ContainerParts(ctx context.Context, id string) ([]platform.Part, error) {
	info, err := p.engine.ContainerInspect(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("inspect container: %w", err)
	}
	if info.State == nil || info.State.Pid <= 0 {
		return nil, fmt.Errorf("container %s is not running", short(id))
	}
	tree, err := proctree.Read()
	if err != nil {
		return nil, err
	}
	pid := info.State.Pid
	init, ok := tree.Get(pid)
	if !ok || !inContainer(pid, info.ID) {
		return nil, nil // the engine's processes are not this host's
	}
	var out []platform.Part
	if shim, ok := tree.Get(init.PPID); ok && strings.HasPrefix(shim.Comm, "containerd-shim") {
		out = append(out, platform.Part{Component: "containerd-shim", PID: shim.PID})
		if argv0(init) == "runsc-sandbox" {
			out = append(out, platform.Part{Component: "runsc-sentry", PID: pid, InGroup: true})
			for _, c := range tree.Children(shim.PID) {
				if argv0(c) == "runsc-gofer" {
					out = append(out, platform.Part{Component: "runsc-gofer", PID: c.PID, InGroup: true})
				}
			}
		}
	}
	var ips []string
	if info.NetworkSettings != nil {
		for _, n := range info.NetworkSettings.Networks {
			if n != nil && n.IPAddress != "" {
				ips = append(ips, n.IPAddress)
			}
			if n != nil && n.GlobalIPv6Address != "" {
				ips = append(ips, n.GlobalIPv6Address)
			}
		}
	}
	for _, p := range tree.Find(func(p proctree.Proc) bool {
		return p.Comm == "docker-proxy" && slices.Contains(ips, proctree.Arg(p.Argv, "-container-ip"))
	}) {
		out = append(out, platform.Part{Component: "docker-proxy", PID: p.PID})
	}
	return out, nil
}

// argv0 is a process's program name as it gave it (gVisor's processes are all "exe" to the
// kernel and name themselves in argv[0]).
func argv0(p proctree.Proc) string {
	if len(p.Argv) == 0 {
		return ""
	}
	return p.Argv[0]
}

func short(id string) string { return id[:min(len(id), 12)] }

// inContainer says whether process pid's control groups name container id (/proc/<pid>/cgroup).
func inContainer(pid int, id string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return err == nil && id != "" && strings.Contains(string(b), id)
}
