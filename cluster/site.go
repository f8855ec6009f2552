package cluster

import (
	"fmt"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/platform"
)

// site is the cluster's client site: nil when its nodes' client runs in boxbench's process,
// else (a container on a swarm overlay network, a client pod on a Kubernetes node) the first
// node's site, whose endpoint names every node the client uses as seen from there. The nodes
// of one cluster share one network, so the first node's site reaches them all.
func (b *Box) site() platform.ClientSite {
	first := b.nodes[0].Traits().Site
	if first == nil {
		return nil
	}
	return clusterSite{ClientSite: first, b: b}
}

// clusterSite is the first node's site, reaching every node the client uses.
type clusterSite struct {
	platform.ClientSite // RunAgent and ClientCPUs: the first node's
	b                   *Box
}

// ClientPlace is the first node's site, and every node the client uses at its address from
// there (the first of them first, as Endpoint).
func (s clusterSite) ClientPlace() (string, driver.Endpoint) {
	where, _ := s.ClientSite.ClientPlace()
	var ep driver.Endpoint
	for k, i := range s.b.clientNodes {
		_, e := s.b.nodes[i].Traits().Site.ClientPlace()
		e.Members = nil
		if k == 0 {
			ep = e
		}
		if len(s.b.clientNodes) > 1 {
			ep.Members = append(ep.Members, e)
		}
	}
	return fmt.Sprintf("%s (the cluster's client, reaching %d node(s) there)", where, len(s.b.clientNodes)), ep
}
