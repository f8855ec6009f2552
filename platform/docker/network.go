package docker

import (
	"context"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/network"
)

// A box on bridge-published or bridge-direct gets a bridge network of its own: on the
// engine's default bridge (docker0) every other container of the host reaches the server's
// address, whatever address the server binds inside its namespace. On its own bridge only
// the host (the bridge's gateway, where the client runs) and the box are. The server still
// listens on 0.0.0.0 in the container: the address is the engine's to assign at start, and
// inside the box's namespace 0.0.0.0 is that address plus its loopback.
//
// The network carries the run's labels, so a crashed experiment's networks are removed by
// Cleanup (after its containers); Teardown removes it after the containers on it.

// createNetwork makes the box's network and records it in the facts.
func (b *box) createNetwork(ctx context.Context) error {
	name := ObjectName(b.req, "net")
	cctx, cancel := Settled(ctx)
	defer cancel()
	// ICC off: a neighbour or any container later attached to this network by mistake does
	// not reach the server either.
	n, err := b.p.engine.NetworkCreate(cctx, name, network.CreateOptions{Driver: "bridge",
		Labels:  Labels(b.req, "network"),
		Options: map[string]string{"com.docker.network.bridge.enable_icc": "false"}})
	if err != nil {
		return fmt.Errorf("create network %s: %w", name, err)
	}
	b.mu.Lock()
	b.network = n.ID
	b.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	b.facts["network_name"] = name
	b.facts["network_bridge"] = "br-" + n.ID[:12] // the engine's name for a user-defined bridge
	ins, err := b.p.engine.NetworkInspect(ctx, n.ID, network.InspectOptions{})
	if err == nil && len(ins.IPAM.Config) > 0 {
		b.facts["network_subnet"] = ins.IPAM.Config[0].Subnet
	}
	return nil
}

// removeNetwork removes the box's network (none, or already gone, is not an error). The
// containers on it must be removed first.
func (b *box) removeNetwork(ctx context.Context) error {
	b.mu.Lock()
	id := b.network
	b.mu.Unlock()
	if id == "" {
		return nil
	}
	if err := b.p.engine.NetworkRemove(ctx, id); err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove network %s: %w", b.facts["network_name"], err)
	}
	return nil
}
