package docker

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/system"

	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/platform"
)

// ociRuntime is what the engine says about one registered runtime, and what boxbench knows
// about it. gVisor (runsc) is recognised by its binary's name; its network stack and root
// filesystem overlay by its runtimeArgs (docs/runtimes.md).
type ociRuntime struct {
	Name string
	Path string // as registered ("runc" for the engine's default is looked up in PATH)
	Args []string

	GVisor bool
	// GVisorNet is gVisor's network stack: "sandbox" (its own netstack, the default), "host"
	// (--network=host: socket calls go to the host kernel) or "none".
	GVisorNet string
	// GVisorRootOverlay: the container's root filesystem gets gVisor's own overlay (the default
	// --overlay2=root:self), so files written there never reach the engine's writable layer.
	GVisorRootOverlay bool
}

func describeRuntime(name string, rs map[string]system.RuntimeWithStatus) ociRuntime {
	rt := ociRuntime{Name: name, Path: name}
	if r, ok := rs[name]; ok {
		if r.Path != "" {
			rt.Path = r.Path
		}
		rt.Args = r.Args
	}
	if !strings.HasPrefix(filepath.Base(rt.Path), "runsc") {
		return rt
	}
	rt.GVisor, rt.GVisorNet, rt.GVisorRootOverlay = true, "sandbox", true
	for _, a := range rt.Args {
		switch v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), "network="); {
		case ok:
			rt.GVisorNet = map[string]string{"host": "host", "none": "none"}[v]
			if rt.GVisorNet == "" {
				rt.GVisorNet = "sandbox"
			}
		case strings.TrimLeft(a, "-") == "overlay2=none" || strings.TrimLeft(a, "-") == "overlay=false":
			rt.GVisorRootOverlay = false
		}
	}
	return rt
}

// check says why rt cannot serve choice c, before anything is started.
func (rt ociRuntime) check(c platform.Choice) error {
	if !rt.GVisor {
		return nil
	}
	var errs []error
	if c.Network == NetworkHost && rt.GVisorNet == "sandbox" {
		errs = append(errs, fmt.Errorf("runtime %s (gVisor with its own network stack) cannot use network host: gVisor refuses "+
			"to run its netstack in the host's network namespace; use a bridge network, or a runtime registered with "+
			"runtimeArgs [\"--network=host\"] (boxbench's setup registers one as runsc-host)", rt.Name))
	}
	if c.Network != "" && c.Network != NetworkHost && rt.GVisorNet == "none" {
		errs = append(errs, fmt.Errorf("runtime %s runs gVisor with --network=none: no network %s", rt.Name, c.Network))
	}
	if c.Storage == StorageOverlay && rt.GVisorRootOverlay {
		errs = append(errs, fmt.Errorf("runtime %s cannot use storage overlay: gVisor keeps the root filesystem's writes in its "+
			"own overlay (a memory file), not in the engine's writable layer, so the data could not be observed or captured "+
			"(valid with gVisor: bind, volume, tmpfs, blockdev; or register runsc with --overlay2=none)", rt.Name))
	}
	return errors.Join(errs...)
}

// facts are the runtime's facts for a box: what it is, where, with which arguments and version.
func (rt ociRuntime) facts(local bool) map[string]string {
	f := map[string]string{"runtime_path": rt.Path}
	if len(rt.Args) > 0 {
		f["runtime_args"] = strings.Join(rt.Args, " ")
	}
	if local {
		f["runtime_version"] = runtimeVersion(rt.Path)
	}
	if rt.GVisor {
		f["runtime_kind"] = "gvisor"
		f["gvisor_network"] = rt.GVisorNet
		f["gvisor_root_overlay"] = fmt.Sprint(rt.GVisorRootOverlay)
	}
	return f
}

// warnings say where gVisor changes what a run measures, so a report never reads a gVisor
// number as a plain container's.
func (rt ociRuntime) warnings(c platform.Choice) []platform.Warning {
	if !rt.GVisor {
		return nil
	}
	ws := []platform.Warning{
		{Code: "gvisor_kernel", Message: "runtime " + rt.Name + " is gVisor: the database's system calls are served by gVisor's " +
			"user-space kernel (the Sentry), not by the host kernel; the box's cgroup CPU includes the Sentry and its gofer, " +
			"and server_pid is the sandbox's pid, not the database's"},
		{Code: "gvisor_files", Message: "under gVisor, file I/O goes through the Sentry's own page cache and VFS before the host " +
			"file: fsync reaches the host file, but cache, read-ahead and writeback behaviour (and the memory charged for it) " +
			"differ from a plain container's"},
	}
	switch rt.GVisorNet {
	case "sandbox":
		ws = append(ws, platform.Warning{Code: "gvisor_netstack", Message: "runtime " + rt.Name + " uses gVisor's own TCP/IP " +
			"stack (netstack) inside the sandbox: packet processing is charged to the box's CPU, not to host softirq, and " +
			"TCP behaviour (buffers, congestion control) is netstack's, not the host kernel's"})
	case "host":
		ws = append(ws, platform.Warning{Code: "gvisor_host_network", Message: "runtime " + rt.Name + " passes socket calls to " +
			"the host kernel's network stack (--network=host): not gVisor's default, and weaker isolation"})
	}
	return ws
}

// runtimeVersion is the first line of `<path> --version` ("?" when it cannot be run: a shim
// v2 runtime or a runtime on another host).
func runtimeVersion(path string) string {
	if !filepath.IsAbs(path) {
		p, err := exec.LookPath(path)
		if err != nil {
			return "?"
		}
		path = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := command.Run(ctx, path, "--version")
	if err != nil {
		return "?"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line)
}

// runtimeNames lists the registered runtimes, sorted.
func runtimeNames(rs map[string]system.RuntimeWithStatus) []string {
	names := make([]string, 0, len(rs))
	for n := range rs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// kataFinding reports Kata Containers when the engine has no Kata runtime registered, with the
// reasons it cannot be there on this host: not installed, and whether the CPU offers hardware
// virtualisation (vmx/svm), which every Kata hypervisor needs. Nil when one is registered (the
// runtime probe then reports it like any other).
func kataFinding(rs map[string]system.RuntimeWithStatus, cpuinfo string) *platform.Finding {
	for n, r := range rs {
		if strings.Contains(n, "kata") || strings.Contains(r.Path, "kata") || strings.Contains(r.Type, "kata") {
			return nil
		}
	}
	var why []string
	installed := ""
	for _, b := range []string{"containerd-shim-kata-v2", "kata-runtime"} {
		if p, err := exec.LookPath(b); err == nil {
			installed = p
		}
	}
	if installed == "" {
		why = append(why, "not installed (Debian 12 has no package)")
	} else {
		why = append(why, installed+" is installed but not registered with the engine")
	}
	if hasCPUFlag(cpuinfo, "vmx") || hasCPUFlag(cpuinfo, "svm") {
		why = append(why, "the CPU offers hardware virtualisation")
	} else {
		why = append(why, "the CPU offers no hardware virtualisation (no vmx or svm flag in /proc/cpuinfo), which Kata's hypervisors need")
	}
	return &platform.Finding{Area: "docker", Name: "runtime kata", Detail: "Kata Containers: " + strings.Join(why, "; "),
		Fix: "on a host with VT-x/AMD-V: install Kata Containers and register it with the engine"}
}

// hasCPUFlag says whether any "flags" line of a /proc/cpuinfo text lists flag.
func hasCPUFlag(cpuinfo, flag string) bool {
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "flags" && slices.Contains(strings.Fields(v), flag) {
			return true
		}
	}
	return false
}
