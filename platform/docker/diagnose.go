package docker

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/image"
	"github.com/boxbench/boxbench/platform"
)

// Diagnose says what this platform can do here, for `boxbench doctor`: the engine, the images
// (and whether they run the native server version), and every registered runtime, each tried
// with a real container (Probe) so a failing one shows the engine's own error.
func (p *Platform) Diagnose(ctx context.Context) []platform.Finding {
	const area = "docker"
	info, err := p.engine.Info(ctx)
	if err != nil {
		return []platform.Finding{{Area: area, Name: "engine", Detail: fmt.Sprintf("%s: %v", p.engine.DaemonHost(), err),
			Fix: "apt-get install -y docker.io; start dockerd (nohup dockerd >/var/log/dockerd.log 2>&1 &)"}}
	}
	backing := ""
	for _, kv := range info.DriverStatus {
		if kv[0] == "Backing Filesystem" {
			backing = " on " + kv[1]
		}
	}
	fs := []platform.Finding{{Area: area, Name: "engine", OK: true, Detail: fmt.Sprintf(
		"%s %s (API %s) at %s; storage driver %s%s; cgroup driver %s v%s; default runtime %s",
		info.OperatingSystem, info.ServerVersion, p.engine.ClientVersion(), p.engine.DaemonHost(),
		info.Driver, backing, info.CgroupDriver, info.CgroupVersion, info.DefaultRuntime)}}
	for _, name := range dbms.Names() {
		d, _ := dbms.Get(name)
		f := platform.Finding{Area: area, Name: "image " + name}
		im, err := p.Image(ctx, d)
		switch {
		case errors.Is(err, image.ErrNotBuilt):
			f.Detail, f.Fix = err.Error(), "boxbench images build --dbms "+name
		case err != nil:
			f.Detail = err.Error()
		default:
			f.Detail = fmt.Sprintf("%s: %s %s", im.Ref, im.ServerPackage, im.ServerVersion)
			if err := image.CheckNative(ctx, im); err != nil {
				f.Detail += "; " + err.Error()
				f.Fix = "boxbench images build --dbms " + name
			} else {
				f.OK = true
				f.Detail += " (same as native)"
			}
		}
		fs = append(fs, f)
	}
	names := make([]string, 0, len(info.Runtimes))
	for n := range info.Runtimes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, rt := range names {
		f := platform.Finding{Area: area, Name: "runtime " + rt}
		if err := p.Probe(ctx, platform.Choice{Runtime: rt, Network: NetworkDirect}); err != nil {
			f.Detail = err.Error()
		} else {
			f.OK, f.Detail = true, "a container ran (bridge network)"
		}
		fs = append(fs, f)
	}
	return fs
}
