package cluster

import (
	"context"
	"fmt"
	"io"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/platform"
)

// AsBox is the cluster as the runner measures it: the cluster itself, or, when its nodes' client
// runs at a site of their platform (a container on a swarm overlay network: platform.ClientSite),
// the cluster with that site, whose endpoint names every node the client uses as seen from
// there. The nodes of one cluster share one network, so the first node's site reaches them all.
func (b *Box) AsBox() platform.Box {
	first, ok := b.nodes[0].(platform.ClientSite)
	if !ok {
		return b
	}
	s := siteBox{Box: b, site: first}
	if p, ok := b.nodes[0].(platform.PinnedSite); ok {
		return pinnedSiteBox{s, p}
	}
	return s
}

// siteBox is a cluster whose client runs at its nodes' site.
type siteBox struct {
	*Box
	site platform.ClientSite
}

var (
	_ platform.ClientSite = siteBox{}
	_ platform.Multi      = siteBox{}
	_ platform.PinnedSite = pinnedSiteBox{}
)

// ClientPlace is the first node's site, and every node the client uses at its address from
// there (the first of them first, as Endpoint).
func (s siteBox) ClientPlace() (string, driver.Endpoint) {
	where, _ := s.site.ClientPlace()
	var ep driver.Endpoint
	for k, i := range s.clientNodes {
		_, e := s.nodes[i].(platform.ClientSite).ClientPlace()
		e.Members = nil
		if k == 0 {
			ep = e
		}
		if len(s.clientNodes) > 1 {
			ep.Members = append(ep.Members, e)
		}
	}
	return fmt.Sprintf("%s (the cluster's client, reaching %d node(s) there)", where, len(s.clientNodes)), ep
}

// RunAgent runs the client at the first node's site.
func (s siteBox) RunAgent(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	return s.site.RunAgent(ctx, stdin, stdout)
}

type pinnedSiteBox struct {
	siteBox
	pinned platform.PinnedSite
}

func (s pinnedSiteBox) ClientCPUs() string { return s.pinned.ClientCPUs() }
