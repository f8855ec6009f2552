package swarm

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"

	"github.com/boxbench/boxbench/platform/docker"
)

// Leftovers: platform.LeftoverLister. The services labelled with experiment exp while the
// engine is in a swarm (a swarm that is gone took its services with it); the task containers,
// networks and volumes on this host's engine are the docker platform's to list.
func (p *Platform) Leftovers(ctx context.Context, _, exp string) ([]string, error) {
	if err := p.hostErr; err != nil {
		return nil, err
	}
	active := func() bool {
		info, err := p.engine.Info(ctx)
		return err == nil && info.Swarm.LocalNodeState == swarm.LocalNodeStateActive
	}
	if !active() {
		return nil, nil
	}
	f := filters.NewArgs(filters.Arg("label", docker.LabelExperiment+"="+exp))
	ss, err := p.engine.ServiceList(ctx, swarm.ServiceListOptions{Filters: f})
	if err != nil {
		if !active() {
			return nil, nil // another process left the swarm between the two calls
		}
		return nil, fmt.Errorf("list the swarm's services of %s: %w", exp, err)
	}
	var left []string
	for _, s := range ss {
		left = append(left, "service "+s.Spec.Name)
	}
	return left, nil
}
