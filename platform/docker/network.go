package docker

import (
	"context"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"

	"github.com/boxbench/boxbench/platform"
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

// joinNetwork puts the box on its own network, or a cluster's node on the cluster's network
// (ClusterNetwork) under its node name, which its peers resolve through the engine's DNS.
func (b *box) joinNetwork(ctx context.Context, cfg *container.Config, nc **network.NetworkingConfig) error {
	n := b.req.Node
	if n == nil || n.Network == "" {
		return b.createNetwork(ctx)
	}
	cfg.Hostname = n.Name
	*nc = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
		n.Network: {Aliases: []string{n.Name}}}}
	b.facts["network_name"] = n.Network
	b.facts["network_alias"] = n.Name
	return nil
}

// netMode is the network the container is created on.
func (b *box) netMode() string {
	if n := b.req.Node; n != nil && n.Network != "" {
		return n.Network
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.network
}

// ClusterRefuses: every network of this platform can carry a cluster (platform.Clusterer).
func (*Platform) ClusterRefuses() map[string]string { return nil }

// NodeAddress: the engine's DNS resolves a node's name on the cluster's network.
func (*Platform) NodeAddress(context.Context, string, int) (string, error) { return "", nil }

// ClusterNetwork makes one bridge network for the nodes of a cluster on a bridge network
// (platform.Clusterer): the nodes reach each other by name; the host (the client) reaches each
// node's published port or bridge address as for a single box. Nodes on the host network share
// it: nothing to make. The network carries the cluster's labels; release removes it after the
// nodes' containers.
func (p *Platform) ClusterNetwork(ctx context.Context, r platform.Request) (string, func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	if r.Network == NetworkHost {
		return "", none, nil
	}
	name := ObjectName(r, "net")
	cctx, cancel := Settled(ctx)
	defer cancel()
	n, err := p.engine.NetworkCreate(cctx, name, network.CreateOptions{Driver: "bridge", Labels: Labels(r, "network")})
	if err != nil {
		return "", none, fmt.Errorf("create cluster network %s: %w", name, err)
	}
	release := func(ctx context.Context) error {
		if err := p.engine.NetworkRemove(ctx, n.ID); err != nil && !cerrdefs.IsNotFound(err) {
			return fmt.Errorf("remove cluster network %s: %w", name, err)
		}
		return nil
	}
	return name, release, nil
}
