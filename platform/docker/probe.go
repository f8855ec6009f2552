package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/boxbench/boxbench/platform"
)

// ProbeTimeout bounds one runtime probe. A runtime that hangs (gVisor's KVM platform on some
// hosts) is reported as such and its container removed.
const ProbeTimeout = 60 * time.Second

// Probe starts a real, tiny container (/bin/true from a boxbench image) with c's runtime and
// network mode, bounded by ProbeTimeout, and returns the engine's own error when it cannot run.
// The probe container is removed on every path.
func (p *Platform) Probe(ctx context.Context, c platform.Choice) error {
	ref, err := p.ProbeImage(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	hc := &container.HostConfig{Runtime: c.Runtime, NetworkMode: "none"}
	switch c.Network {
	case NetworkHost:
		hc.NetworkMode = "host"
	case NetworkPublished, NetworkDirect:
		hc.NetworkMode = "bridge"
	}
	r := platform.Request{Experiment: ProbeExperiment, Run: "runtime-" + c.Runtime}
	lab := map[string]string{LabelBoxbench: "1", LabelExperiment: ProbeExperiment, LabelRun: r.Run, LabelRole: "probe"}
	cctx, ccancel := Settled(ctx)
	defer ccancel()
	cr, err := p.engine.ContainerCreate(cctx, &container.Config{Image: ref, Cmd: []string{"/bin/true"}, Labels: lab},
		hc, nil, nil, ObjectName(r, "probe"))
	if err != nil {
		return p.probeError(c, "create", err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		_ = p.Remove(rctx, cr.ID)
	}()
	waitC, errC := p.engine.ContainerWait(ctx, cr.ID, container.WaitConditionNextExit)
	if err := p.engine.ContainerStart(ctx, cr.ID, container.StartOptions{}); err != nil {
		return p.probeError(c, "start", err)
	}
	select {
	case w := <-waitC:
		if w.StatusCode != 0 {
			msg := ""
			if w.Error != nil {
				msg = w.Error.Message
			}
			b := &box{p: p, id: cr.ID}
			return fmt.Errorf("runtime %s: /bin/true exited with status %d %s%s", c.Runtime, w.StatusCode, msg,
				strings.TrimSpace("\n"+b.LogTail(2048)))
		}
		return nil
	case err := <-errC:
		return p.probeError(c, "wait", err)
	case <-ctx.Done():
		return p.probeError(c, "wait", ctx.Err())
	}
}

func (p *Platform) probeError(c platform.Choice, step string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("runtime %s: %s did not finish within %s (the probe container was removed)", c.Runtime, step, ProbeTimeout)
	}
	return fmt.Errorf("runtime %s: %s: %w", c.Runtime, step, err)
}

// ProbeImage picks the newest image boxbench built; every one has /bin/true.
func (p *Platform) ProbeImage(ctx context.Context) (string, error) {
	list, err := p.images.List(ctx)
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", errors.New("no boxbench image to probe runtimes with: run `boxbench images build`")
	}
	return list[0].ID, nil
}
