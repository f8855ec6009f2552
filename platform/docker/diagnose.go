package docker

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/platform"
)

// Diagnose says what this platform can do here, for `boxbench doctor`: the engine, the images
// (and whether they run the native server version), and every registered runtime, each tried
// with a real container (Probe) so a failing one shows the engine's own error.
func (p *Platform) Diagnose(ctx context.Context, dbs []dbms.DBMS) []platform.Finding {
	const area = "docker"
	info, err := p.engine.Info(ctx)
	if err != nil {
		fix := "apt-get install -y docker.io; start dockerd (nohup dockerd >/var/log/dockerd.log 2>&1 &)"
		if na := (*image.NoAnswerError)(nil); errors.As(err, &na) {
			fix = "the engine accepts connections but does not answer: restart it, or point DOCKER_HOST at one that works"
		}
		return []platform.Finding{{Area: area, Name: "engine", Detail: image.EngineError(p.engine, err).Error(), Fix: fix}}
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
	for _, d := range dbs {
		name := d.Name()
		f := platform.Finding{Area: area, Name: "image " + name}
		im, err := p.Image(ctx, d)
		switch {
		case errors.Is(err, image.ErrNotBuilt):
			f.Lacks(err, "boxbench images build --dbms "+name)
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
	for _, name := range runtimeNames(info.Runtimes) {
		rt := describeRuntime(name, info.Runtimes)
		f := platform.Finding{Area: area, Name: "runtime " + name}
		// A gVisor runtime with the host's network stack is probed on the host network, the
		// one it is registered for; every other runtime on a bridge.
		c, how := platform.Choice{Runtime: name, Network: NetworkDirect}, "bridge network"
		if rt.GVisor && rt.GVisorNet == "host" {
			c.Network, how = NetworkHost, "host network"
		}
		if err := p.Probe(ctx, c); err != nil {
			f.Detail = err.Error()
		} else {
			f.OK, f.Detail = true, "a container ran ("+how+")"
		}
		if p.engineIsLocal() {
			if v := runtimeVersion(rt.Path); v != "?" {
				f.Detail += "; " + v
			}
		}
		fs = append(fs, f)
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	if f := kataFinding(info.Runtimes, string(cpuinfo)); f != nil && p.engineIsLocal() {
		fs = append(fs, *f)
	}
	return fs
}
