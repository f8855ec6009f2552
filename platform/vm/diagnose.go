package vm

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/images/vmimage"
	"github.com/boxbench/boxbench/platform"
)

// Diagnose says whether VMs work here and how: QEMU, the accelerator a guest really boots under
// (the KVM trial's own output when it is TCG), the tap device, and each database's guest image.
func (p *Platform) Diagnose(ctx context.Context, dbs []dbms.DBMS) []platform.Finding {
	qemu := platform.ToolFinding(ctx, p.name, "qemu", "apt-get install qemu-system-x86 qemu-utils", "qemu-system-x86_64", "--version")
	fs := []platform.Finding{qemu}
	if !qemu.OK {
		return fs
	}
	_, err := os.Stat("/dev/net/tun")
	fs = append(fs, platform.Finding{Area: p.name, Name: "tap", OK: err == nil,
		Detail: "network bridge puts the guest on a tap device (/dev/net/tun); nat needs none"})
	var trialDone bool
	var images []platform.Finding
	for _, d := range dbs {
		name := d.Name()
		f := platform.Finding{Area: p.name, Name: "guest image " + name}
		tree, err := p.trees.Find(ctx, d)
		if err == nil {
			img, ierr := p.images.Find(tree, p.variant)
			if ierr == nil {
				f.OK, f.Detail = true, img.Disk+" (kernel "+img.KernelVersion+")"
				if !trialDone {
					trialDone = true
					a := chooseAccel(ctx, img, os.TempDir())
					fs = append(fs, platform.Finding{Area: p.name, Name: "accelerator", OK: true,
						Detail: a.Accel + ": " + a.Why + labelOf(a)})
				}
			}
			err = ierr
		}
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			return fs
		default:
			f.Lacks(p.treeMissing(d, err), "boxbench images build --dbms "+name+" --vm")
		}
		images = append(images, f)
	}
	fs = append(fs, images...)
	if !trialDone {
		fs = append(fs, platform.Finding{Area: p.name, Name: "accelerator", Detail: "not tried: the trial boots a guest image's kernel, and none is built",
			Fix: "boxbench images build --vm"})
	}
	return fs
}

// HostFindings: platform.HostChecker. Whether this host has KVM at all, the same finding for vm
// and vm-docker (doctor lists it once).
func (p *Platform) HostFindings() []platform.Finding {
	if _, err := os.Stat("/dev/kvm"); err == nil {
		return []platform.Finding{{Area: "host", Name: "kvm", OK: true, Detail: "/dev/kvm present (whether a guest boots under it needs a trial)"}}
	}
	return []platform.Finding{{Area: "host", Name: "kvm", OK: false, Detail: "no /dev/kvm: a VM platform would run emulated (TCG)"}}
}

// ImageFlag and BuildImages: platform.ImageBuilder, the guest image of p's variant (vm and
// vm-docker share the flag --vm).
func (p *Platform) ImageFlag() (string, string) {
	return "vm", "also build each database's guest images for the vm and vm-docker platforms (the tree plus Debian's kernel and the QEMU guest agent, and with dockerd and the image loaded, under " + vmimage.DefaultRoot + ")"
}

func (p *Platform) BuildImages(ctx context.Context, tree rootfs.Tree, done func(line string, built bool, err error)) {
	g, built, err := p.images.Get(ctx, tree, p.variant)
	if err != nil {
		done("", false, err)
		return
	}
	done(fmt.Sprintf("%s  kernel %s %s", g.Disk, g.KernelVersion, g.DockerImage), built, nil)
}

func labelOf(a AccelChoice) string {
	if a.Emulated() {
		return " — VM results here are labelled emulated and carry no verdict"
	}
	return ""
}
