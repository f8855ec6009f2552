package swarm

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"gopkg.in/yaml.v3"

	"github.com/boxbench/boxbench/platform/docker"
	"github.com/boxbench/boxbench/spec/section"
)

// Leaving a swarm makes Docker 20.10 forget the container names of every user-defined bridge
// network that exists at the leave (moby/moby#45144): containers there no longer resolve each
// other by name until they are reconnected. boxbench leaves the swarms it initialises, so
// before it initialises one it looks for running containers on such networks — the user's, or
// another experiment's Docker cluster — and refuses, naming them, unless the spec accepts the
// loss (swarm.acceptBridgeDNSLoss). A release that finds such containers (started while the
// swarm was up) keeps the swarm instead of breaking them; a later release or `doctor
// --cleanup` leaves it once they are gone.

// SectionKey is the spec's key of this platform's section (platform.Settings).
const SectionKey = "swarm"

// Section is the spec's swarm: block (docs/swarm.md).
type Section struct {
	// AcceptBridgeDNSLoss lets boxbench initialise and leave a swarm on an engine whose
	// user-defined bridge networks have running containers, which then lose name resolution.
	AcceptBridgeDNSLoss bool `yaml:"acceptBridgeDNSLoss"`
}

// SectionKey: platform.Settings.
func (p *Platform) SectionKey() string { return SectionKey }

// DecodeSection decodes the swarm: block (n nil: the defaults) into the Section its Configure
// configures the platform with.
func (p *Platform) DecodeSection(n *yaml.Node, _ section.Context) (section.Decoded, []section.Problem) {
	var s Section
	ps := section.Decode(n, SectionKey, &s)
	return section.Decoded{Configure: func() { p.Configure(s) }}, ps
}

// Configure configures the platform with a swarm: block, replacing an earlier one.
func (p *Platform) Configure(s Section) {
	p.mu.Lock()
	p.section = s
	p.mu.Unlock()
}

func (p *Platform) acceptsDNSLoss() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.section.AcceptBridgeDNSLoss
}

// bridgeContainers lists the running containers on user-defined bridge networks of the
// engine, as "name (network net[, boxbench experiment exp])", sorted; a single box's own
// network does not count.
func (p *Platform) bridgeContainers(ctx context.Context) ([]string, error) {
	nets, err := p.engine.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("driver", "bridge"))})
	if err != nil {
		return nil, fmt.Errorf("list bridge networks: %w", err)
	}
	user := map[string]bool{}
	for _, n := range nets {
		if n.Name != "bridge" && n.Name != gwBridge && !singleBox(n) {
			user[n.Name] = true
		}
	}
	if len(user) == 0 {
		return nil, nil
	}
	cs, err := p.engine.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(filters.Arg("status", "running"))})
	if err != nil {
		return nil, fmt.Errorf("list running containers: %w", err)
	}
	var out []string
	for _, c := range cs {
		if c.NetworkSettings == nil {
			continue
		}
		for name := range c.NetworkSettings.Networks {
			if !user[name] {
				continue
			}
			what := "network " + section.SafeText(name)
			if exp := c.Labels[docker.LabelExperiment]; exp != "" {
				what += ", boxbench experiment " + section.SafeText(exp)
			}
			cname := strings.TrimPrefix(firstOr(c.Names, c.ID), "/")
			out = append(out, fmt.Sprintf("%s (%s)", section.SafeText(cname), what))
		}
	}
	slices.Sort(out)
	return out, nil
}

// singleBox: a network the docker platform made for one box (labelled, containers isolated
// from each other), whose client is the host: nothing on it resolves a name.
func singleBox(n network.Summary) bool {
	return n.Labels[docker.LabelBoxbench] == "1" && n.Options["com.docker.network.bridge.enable_icc"] == "false"
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// guardBridges refuses a swarm init while containers run on user-defined bridge networks,
// unless the spec accepts the loss of their name resolution at the leave.
func (p *Platform) guardBridges(ctx context.Context) error {
	if p.acceptsDNSLoss() {
		return nil
	}
	cs, err := p.bridgeContainers(ctx)
	if err != nil || len(cs) == 0 {
		return err
	}
	return fmt.Errorf("not initialising a swarm on this engine: leaving it would make the engine forget the container names of its user-defined bridge networks (Docker 20.10, moby/moby#45144), and these containers run on one: %s; "+
		"stop them, run the swarm cells on an engine of their own (%s, docs/swarm.md), or accept the loss with `swarm: {acceptBridgeDNSLoss: true}` in the spec",
		strings.Join(cs, ", "), EnvHost)
}
