package lxc

import (
	"context"
	"errors"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/platform"
)

// Diagnose says whether LXC works here and why not: its tools, the kernel's overlayfs, the
// cgroup layout, and the root filesystem of each database.
func (p *Platform) Diagnose(ctx context.Context, dbs []dbms.DBMS) []platform.Finding {
	lxc := platform.ToolFinding(ctx, Name, "lxc", "apt-get install lxc", "lxc-start", "--version")
	if lxc.OK {
		lxc.Detail = "LXC " + lxc.Detail + ", application containers; cgroup " + cgroup.HostMode()
	}
	fs := []platform.Finding{lxc}
	fs = append(fs, platform.Finding{Area: Name, Name: "overlayfs", OK: kernelHas("overlay"),
		Detail: "the rootfs storage and the shared read-only tree need overlayfs (CONFIG_OVERLAY_FS)"})
	for _, d := range dbs {
		name := d.Name()
		t, err := p.trees.Find(ctx, d)
		f := platform.Finding{Area: Name, Name: "rootfs " + name}
		switch {
		case err == nil:
			f.OK, f.Detail = true, t.Dir+" ("+t.ServerPackage+" "+t.ServerVersion+")"
		case errors.Is(err, context.Canceled):
			return fs
		default:
			f.Lacks(err, "boxbench images build --dbms "+name)
		}
		fs = append(fs, f)
	}
	return fs
}
