// Package vm runs a database in a QEMU guest: the virtual machine of the storage-tier and
// isolation studies. The guest boots Debian's kernel on a disk made from the same root
// filesystem as the Docker image and the LXC container (package vmimage), with the same server
// build, start command and configuration files.
//
// A box is one QEMU process, our child, in the host control group /boxbench/<experiment>/<run>
// (the host's view of the box: CPU bandwidth, cpuset, weights and I/O limits apply to the whole
// VMM). Inside, boxbench's init hands pid 1 to the QEMU guest agent, and everything else —
// mounting the data's storage, copying the seed in, initialising, starting and stopping the
// server, Exec, the guest's own telemetry — goes through the agent over a virtio-serial port,
// which needs no guest network.
//
//   - accelerator: KVM when a trial boot of the guest kernel reaches its root mount under it,
//     else TCG (software emulation). A TCG box carries the warning "emulated" and every result
//     of it is labelled so: its overhead is the emulator's, never a virtualisation cost;
//   - resources: vCPUs from cpus (rounded up) or the cpuset's size, vCPU threads pinned one to
//     one on the cpuset's cores; RAM from memory; the host group gets CPU bandwidth, cpuset,
//     weights and I/O limits (on the device of the box's disk images);
//   - storage: rootfs (the guest's root disk: a qcow2 overlay on the shared base), blockdev (a
//     dedicated virtio disk: a raw image file, or a device the user names, formatted on the
//     host), tmpfs (in the guest's RAM);
//   - network: nat (QEMU's user-mode network, the server's port forwarded to 127.0.0.1) or bridge
//     (a tap on a bridge boxbench creates; the client reaches the guest's address directly).
//
// Every box writes a marker (vm-box.json) into its work directory first, so Cleanup finds what a
// crashed experiment left: the QEMU process (in its group), the tap and the bridge.
package vm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/images/vmimage"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostcg"
)

// Names of the platforms in specs.
const (
	Name       = "vm"        // the database in the guest
	NameDocker = "vm-docker" // the database in a Docker container in the guest
)

// Storage and network choices these platforms know.
const (
	StorageRootfs  = "rootfs"  // vm: the guest's root disk
	StorageOverlay = "overlay" // vm-docker: the container's writable layer in the guest
	StorageBind    = "bind"    // vm-docker: a guest directory bound into the container
	NetworkNAT     = "nat"
	NetworkBridge  = "bridge"
)

// Platform is a QEMU platform: vm, or vm-docker (variant vmimage.Docker).
type Platform struct {
	name    string
	variant string
	trees   *rootfs.Cache
	images  vmimage.Cache
	log     *slog.Logger
}

// New returns the vm platform over the shared root-filesystem cache and the guest image cache.
func New(trees *rootfs.Cache, images vmimage.Cache, log *slog.Logger) *Platform {
	return newPlatform(Name, vmimage.Plain, trees, images, log)
}

// NewDocker returns the vm-docker platform: dockerd in the guest (Debian's docker.io), the
// database's image loaded into it offline when the guest image is built.
func NewDocker(trees *rootfs.Cache, images vmimage.Cache, log *slog.Logger) *Platform {
	return newPlatform(NameDocker, vmimage.Docker, trees, images, log)
}

func newPlatform(name, variant string, trees *rootfs.Cache, images vmimage.Cache, log *slog.Logger) *Platform {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Platform{name: name, variant: variant, trees: trees, images: images, log: log}
}

func (p *Platform) docker() bool { return p.variant == vmimage.Docker }

// Info: the VMM is a group on this host's tree (HostCgroup: its CPU, memory and I/O are seen
// there, the guest's processes are not); no OCI runtime; seeds are loaded elsewhere (the data
// directory lives on a guest disk).
func (p *Platform) Info() platform.Info {
	i := platform.Info{Name: p.name, Networks: []string{NetworkNAT, NetworkBridge}, HostCgroup: true, Setup: []string{"vm", "images"},
		Diagnoser: p, BoxCleaner: p, Host: p, Images: p}
	if p.docker() {
		i.Storages = []string{StorageOverlay, StorageBind}
		i.Fallback = map[string]string{"volume": StorageBind, StorageRootfs: StorageOverlay, storage.Tmpfs: StorageBind, storage.Blockdev: StorageBind}
	} else {
		i.Storages = []string{StorageRootfs, storage.Blockdev, storage.Tmpfs}
		i.Fallback = map[string]string{StorageBind: StorageRootfs, StorageOverlay: StorageRootfs, "volume": StorageRootfs}
	}
	return i
}

var tools = []string{"qemu-system-x86_64", "qemu-img", "mkfs.ext4", "ip"}

// Check: QEMU and the tools are installed, the database's root filesystem and guest image are
// built, and a bridge network has /dev/net/tun.
func (p *Platform) Check(ctx context.Context, c platform.Choice) error {
	var errs []error
	info := p.Info()
	if !slices.Contains(info.Storages, c.Storage) {
		errs = append(errs, fmt.Errorf("%s does not offer storage %q (valid: %s)", p.name, c.Storage, strings.Join(info.Storages, ", ")))
	}
	switch c.Network {
	case NetworkNAT:
	case NetworkBridge:
		if _, err := os.Stat("/dev/net/tun"); err != nil {
			errs = append(errs, fmt.Errorf("network bridge needs /dev/net/tun for the VM's tap: %v", err))
		}
	default:
		errs = append(errs, fmt.Errorf("%s does not offer network %q (valid: nat, bridge)", p.name, c.Network))
	}
	if c.Runtime != "" {
		errs = append(errs, fmt.Errorf("%s has no OCI runtime choice (runtime=%s)", p.name, c.Runtime))
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			n := prereq.Need{What: "QEMU is not installed", Command: "apt-get install -y qemu-system-x86 qemu-utils e2fsprogs iproute2",
				Takes: time.Minute, Basis: prereq.Typical}
			errs = append(errs, prereq.New(n, fmt.Errorf("%s is not installed: %s", t, n.Command)))
			break
		}
	}
	if c.DBMS != nil {
		errs = append(errs, p.checkImages(ctx, c.DBMS))
	}
	return errors.Join(errs...)
}

// checkImages: the database's root filesystem and guest image are built. Either missing is one
// prerequisite, `images build --vm`, which makes both.
func (p *Platform) checkImages(ctx context.Context, d dbms.DBMS) error {
	tree, err := p.trees.Find(ctx, d)
	if err != nil {
		return p.treeMissing(d, err)
	}
	_, err = p.images.Find(tree, p.variant)
	return err
}

// treeMissing: a root filesystem not built is, for this platform, the prerequisite of its guest
// image, whose command builds both (err unchanged otherwise).
func (p *Platform) treeMissing(d dbms.DBMS, err error) error {
	if !errors.Is(err, rootfs.ErrNotBuilt) {
		return err
	}
	takes, basis := p.trees.Estimate(d.Name())
	return prereq.New(p.images.Need(d.Name(), p.variant, takes, basis), errors.Unwrap(err))
}

// Provision boots a guest and starts the server in it.
func (p *Platform) Provision(ctx context.Context, r platform.Request) (platform.Box, error) {
	b := newBox(p, r)
	if err := b.provision(ctx); err != nil {
		return nil, platform.Undo(ctx, b, err)
	}
	return b, nil
}

// Cleanup removes what crashed experiments' VMs left: their QEMU processes (by pid, from their
// groups), groups, taps and bridges, found through the boxes' markers; then their disk images
// and work directories.
func (p *Platform) Cleanup(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	return platform.CleanupWith(ctx, p, workRoot, crashed)
}

// CleanupBoxes is Cleanup without its last step, the work root's mounts, loop devices and
// directories (platform.CleanupAll runs that once, after every platform's boxes).
func (p *Platform) CleanupBoxes(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	done, err := platform.CleanupMarked(ctx, workRoot, markerFile, readMarker, crashed)
	return append(done, hostcg.RemoveEmptyExperimentGroups(workRoot, crashed)...), err
}
