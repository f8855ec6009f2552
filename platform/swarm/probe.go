package swarm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/docker/docker/api/types/swarm"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/platform"
)

// ProbeTimeout bounds one trial.
const ProbeTimeout = 3 * time.Minute

// ProbeExperiment is the experiment id of trial boxes.
const ProbeExperiment = "swarm-probe"

// Probe tries c for real: it provisions a box of c.DBMS (Trial when c names none) with c's
// network and storage (a volume when c names none), which includes the path check from a
// container on the overlay (for vip: the virtual IP answers), and tears it down. The error is
// the provision's own: the engine's, the orchestrator's task status, or the failed connect.
func (p *Platform) Probe(ctx context.Context, c platform.Choice) error {
	d := c.DBMS
	if d == nil {
		d = p.Trial
	}
	if d == nil {
		return errors.New("swarm: a probe names no database and the platform has no trial database")
	}
	if c.Storage == "" {
		c.Storage = StorageVolume
	}
	dir, err := os.MkdirTemp("", "boxbench-swarm-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	r := platform.Request{Experiment: ProbeExperiment, Run: fmt.Sprintf("p%d-%s", os.Getpid(), c.Network),
		WorkDir: filepath.Join(dir, "box"), DBMS: d, Choice: c}
	b, err := p.Provision(ctx, r)
	if err != nil {
		return err
	}
	return b.Teardown(ctx)
}

// Diagnose says what this platform can do here, for `boxbench doctor`: the engine's swarm state
// and who created it, the kernel options the networks need, and a real trial of each network.
func (p *Platform) Diagnose(ctx context.Context, dbs []dbms.DBMS) []platform.Finding {
	const area = Name
	info, err := p.engine.Info(ctx)
	if err != nil {
		return []platform.Finding{{Area: area, Name: "engine", Detail: image.EngineError(p.engine, err).Error()}}
	}
	sw := info.Swarm
	f := platform.Finding{Area: area, Name: "swarm", OK: true}
	switch sw.LocalNodeState {
	case swarm.LocalNodeStateInactive:
		f.Detail = "inactive: boxbench initialises a single-node swarm on 127.0.0.1 for its boxes and leaves it afterwards"
	case swarm.LocalNodeStateActive:
		m, _ := readMarker(info.ID, clusterID(sw))
		who := "not created by boxbench: used, never left"
		if m != nil && m.ClusterID == clusterID(sw) {
			who = "created by boxbench at " + m.Created.Format(time.RFC3339) + " (left when its last box is gone)"
		}
		f.Detail = fmt.Sprintf("active, node %s, %d node(s), manager %v; %s", sw.NodeID, sw.Nodes, sw.ControlAvailable, who)
		f.OK = sw.ControlAvailable
	default:
		f.OK, f.Detail = false, fmt.Sprintf("%s: %s", sw.LocalNodeState, sw.Error)
	}
	fs := []platform.Finding{f}
	for _, k := range []struct{ opt, why string }{
		{"CONFIG_VXLAN", "network overlay (VXLAN)"},
		{"CONFIG_IP_VS", "network vip and the ingress routing mesh (IPVS)"},
	} {
		f := platform.Finding{Area: area, Name: "kernel " + k.opt, OK: true, Detail: "not disabled in the kernel's configuration: needed by " + k.why}
		if err := kernelHas(k.opt, "needed by "+k.why); err != nil {
			f.OK, f.Detail = false, err.Error()
		}
		fs = append(fs, f)
	}
	d := p.Trial
	if d == nil {
		return append(fs, platform.Finding{Area: area, Name: "trial", Detail: "no trial database (the build sets one)"})
	}
	if _, err := p.d.Image(ctx, d); errors.Is(err, image.ErrNotBuilt) {
		f := platform.Finding{Area: area, Name: "trial"}
		f.Lacks(err, "boxbench images build --dbms "+d.Name())
		return append(fs, f)
	}
	for _, n := range []string{NetworkHost, NetworkOverlay, NetworkVIP} {
		f := platform.Finding{Area: area, Name: "network " + n}
		if err := p.Probe(ctx, platform.Choice{DBMS: d, Storage: StorageVolume, Network: n}); err != nil {
			f.Detail = err.Error()
		} else {
			f.OK, f.Detail = true, "a Redis service answered (volume storage)"
		}
		fs = append(fs, f)
	}
	return fs
}
