// Package lxc runs a database in an LXC application container (LXC 5, Debian's lxc package):
// the container of the isolation study, driven through LXC's own tools (lxc-start, lxc-attach,
// lxc-stop), never lxc-destroy (it deletes a dir: root filesystem, which here is the shared,
// read-only tree of package rootfs).
//
// A box is one container whose pid 1 is the server, started from the same Debian root
// filesystem the Docker image is built from (rootfs.Cache), with the same start command and
// configuration files as natively, under the same limits:
//
//   - storage: rootfs (the container's own directory tree: an overlay whose upper layer is the
//     box's), bind (a host directory made like the native one), tmpfs (a host tmpfs bound in),
//     blockdev (a dedicated filesystem on a loop device or a named device, bound in);
//   - network: host (the host's network namespace) or bridge (a veth on a bridge boxbench
//     creates for the box, static addresses; the client reaches the container's address);
//   - limits: CPU bandwidth, cpuset, memory and CPU weight as LXC cgroup keys; I/O weight and
//     limits written into the container's group after start (they need the data's device);
//     everything read back from the kernel.
//
// The container's group is /boxbench/<experiment>/<run> (the native path), its monitor's
// beside it. Every box writes a marker (lxc-box.json) into its work directory first, so Cleanup
// finds what a crashed experiment left: processes, groups, interfaces, LXC's lock files.
package lxc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostcg"
)

// Name is the platform's name in specs.
const Name = "lxc"

// Storage and network choices this platform knows.
const (
	StorageRootfs = "rootfs"
	NetworkHost   = "host"
	NetworkBridge = "bridge"
)

// Platform is the LXC platform.
type Platform struct {
	trees *rootfs.Cache
	log   *slog.Logger
}

// New returns the LXC platform over the shared root-filesystem cache.
func New(trees *rootfs.Cache, log *slog.Logger) *Platform {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Platform{trees: trees, log: log}
}

// Info: containers are groups on this host's tree; no OCI runtime (LXC is its own).
func (p *Platform) Info() platform.Info {
	return platform.Info{Name: Name, Diagnoser: p, BoxCleaner: p, Leftovers: p, Setup: []string{"lxc", "images"},
		Storages: []string{StorageRootfs, storage.Bind, storage.Tmpfs, storage.Blockdev},
		Networks: []string{NetworkHost, NetworkBridge}, HostCgroup: true,
		Load: &platform.Choice{Storage: storage.Bind, Network: NetworkHost}}
}

// tools are the LXC commands a box needs.
var tools = []string{"lxc-start", "lxc-stop", "lxc-attach", "lxc-execute", "lxc-info"}

// Check: LXC's tools and common configuration are installed, the kernel has overlayfs (the
// rootfs storage and the read-only shared tree), the database's root filesystem is built.
func (p *Platform) Check(ctx context.Context, c platform.Choice) error {
	var errs []error
	switch c.Storage {
	case StorageRootfs, storage.Bind, storage.Tmpfs, storage.Blockdev:
	default:
		errs = append(errs, fmt.Errorf("lxc does not offer storage %q (valid: rootfs, bind, tmpfs, blockdev)", c.Storage))
	}
	switch c.Network {
	case NetworkHost, NetworkBridge:
	default:
		errs = append(errs, fmt.Errorf("lxc does not offer network %q (valid: host, bridge)", c.Network))
	}
	if c.Runtime != "" {
		errs = append(errs, fmt.Errorf("lxc has no OCI runtime (runtime=%s)", c.Runtime))
	}
	install := prereq.Need{What: "LXC is not installed", Command: "apt-get install -y lxc", Takes: 30 * time.Second, Basis: prereq.Typical}
	missing := false
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			errs = append(errs, prereq.New(install, fmt.Errorf("%s is not installed: apt-get install -y lxc", t)))
			missing = true
			break
		}
	}
	if _, err := os.Stat(commonConf); err != nil && !missing { // the same install provides it
		errs = append(errs, prereq.New(install, fmt.Errorf("LXC's %s is missing: apt-get install -y lxc", commonConf)))
	}
	if !kernelHas("overlay") {
		errs = append(errs, errors.New("the kernel has no overlayfs (CONFIG_OVERLAY_FS): LXC boxes run on an overlay of the shared root filesystem"))
	}
	if c.DBMS != nil {
		if _, err := p.trees.Find(ctx, c.DBMS); err != nil {
			errs = append(errs, err) // says which tree and how to build it
		}
	}
	return errors.Join(errs...)
}

// kernelHas says whether /proc/filesystems lists fs.
func kernelHas(fs string) bool {
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == fs {
			return true
		}
	}
	return false
}

// Provision starts the server in a container.
func (p *Platform) Provision(ctx context.Context, r platform.Request) (platform.Box, error) {
	b := newBox(p, r)
	if err := b.provision(ctx); err != nil {
		return nil, platform.Undo(ctx, b, err)
	}
	return b, nil
}

// Cleanup removes what crashed experiments' containers left: their processes (by pid, from
// their own groups), groups, interfaces and LXC lock files, found through the boxes' markers;
// then their storage and work directories.
func (p *Platform) Cleanup(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	return platform.CleanupWith(ctx, p, workRoot, crashed)
}

// CleanupBoxes is Cleanup without its last step, the work root's mounts, loop devices and
// directories (platform.CleanupAll runs that once, after every platform's boxes).
func (p *Platform) CleanupBoxes(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	done, err := platform.CleanupMarked(ctx, workRoot, markerFile, readMarker, crashed)
	return append(done, hostcg.RemoveEmptyExperimentGroups(workRoot, crashed)...), err
}

// signalName is "SIGTERM" for syscall.SIGTERM (LXC's lxc.signal.halt takes names).
func signalName(s syscall.Signal) string { return unix.SignalName(s) }
