// Package cluster runs a database as a topology of several boxes (docs/topology.md): it places
// the nodes (their addresses, ports and cpus), provisions every node as an ordinary box of the
// cell's platform (so each has its own cgroup or container, data directory and limits, and a
// crash leaves nothing `doctor --cleanup` cannot find), waits until the cluster itself says
// every member is up, and tears all nodes down together. The result is a platform.Box, so the
// runner measures a cluster like any other box; Nodes gives the per-node view for telemetry.
//
// What is the database's (membership configuration, the cluster's own readiness) is
// dbms.Clustered; what is the platform's (a shared network) is platform.Clusterer.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/platform"
)

// Check says why platform p cannot run topology t of d on network (nil when it can): the
// platform must place nodes (platform.Info.Cluster), the database must have that topology, and
// the nodes must reach each other over TCP.
func Check(p platform.Platform, d dbms.DBMS, network string, t dbms.Topology) error {
	var errs []error
	if clu := p.Info().Cluster; clu == nil {
		errs = append(errs, fmt.Errorf("platform %s does not run topologies yet (its boxes cannot be nodes of a cluster; docs/topology.md says which platforms run them)", p.Info().Name))
	} else if why, refused := clu.ClusterRefuses()[network]; refused {
		errs = append(errs, fmt.Errorf("platform %s network %s cannot carry a cluster: %s", p.Info().Name, network, why))
	}
	if c, ok := dbms.ClusteredOf(d); !ok {
		errs = append(errs, fmt.Errorf("dbms %s has no topology", d.Name()))
	} else {
		for _, m := range c.CheckTopology(t) {
			errs = append(errs, errors.New(m))
		}
	}
	return errors.Join(errs...)
}

// readyPoll is the pause between two questions to the cluster about its members.
const readyPoll = 200 * time.Millisecond

// firstProbe and maxProbe bound one question of waitCluster's.
const firstProbe, maxProbe = 5 * time.Second, time.Minute

// Provision starts t.Nodes nodes of r.DBMS (which carries the run's password) on platform p
// and returns them as one Box once every node is ready and the cluster says all members are
// up. r is the request a single box would get: its Run and WorkDir name the cluster, each node
// gets Run "<run>-nN" and the work directory beside it. On error nothing is left: every node
// started is torn down, and the error names the node that failed with its log tail.
func Provision(ctx context.Context, p platform.Platform, r platform.Request, t dbms.Topology) (*Box, error) {
	if err := Check(p, r.DBMS, r.Network, t); err != nil {
		return nil, err
	}
	clu := p.Info().Cluster
	c, _ := dbms.ClusteredOf(r.DBMS)
	b := &Box{t: t, d: r.DBMS, facts: map[string]string{}, release: func(context.Context) error { return nil }}
	netName, release, err := clu.ClusterNetwork(ctx, r)
	if err != nil {
		return nil, err
	}
	b.release = release
	pl, err := place(ctx, r, t, c, clu, netName)
	if err != nil {
		return nil, b.undo(ctx, err)
	}
	b.place = pl
	reqs := make([]platform.Request, t.Nodes)
	for i := range reqs {
		nd, err := dbms.NodeOf(r.DBMS, t, i, pl.peers)
		if err != nil {
			return nil, b.undo(ctx, err)
		}
		q := r
		name := pl.peers[i].Name
		q.Run, q.WorkDir, q.DBMS = r.Run+"-"+name, r.WorkDir+"-"+name, nd
		q.Node = &platform.Node{Name: name, Network: netName, Ports: pl.ports[i], Index: i, Count: t.Nodes}
		q.Resources.Cpuset = pl.cpusets[i]
		reqs[i] = q
	}
	b.nodes = make([]platform.Box, t.Nodes)
	// Every node starts at once: a member of a quorum-based cluster is ready only when enough
	// of its peers are up. The first node that fails stops the others' waiting.
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			box, err := p.Provision(pctx, reqs[i])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = fmt.Errorf("node %s did not start or join: %w", pl.peers[i].Name, err)
					cancel(first)
				}
				return
			}
			b.nodes[i] = box
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, b.undo(ctx, fmt.Errorf("%w\n(the other nodes were torn down)", first))
	}
	eps := make([]driver.Endpoint, t.Nodes)
	for i, n := range b.nodes {
		eps[i] = n.Endpoint()
	}
	facts, err := waitCluster(ctx, c, t, eps, r.DBMS.Client())
	if err != nil {
		return nil, b.undo(ctx, fmt.Errorf("the cluster did not report every member up: %w\n%s", err, b.LogTail(2048)))
	}
	clientNodes, what := c.ClientNodes(t)
	b.clientNodes = clientNodes
	b.ep = eps[clientNodes[0]]
	if len(clientNodes) > 1 {
		for _, i := range clientNodes {
			b.ep.Members = append(b.ep.Members, eps[i])
		}
	}
	b.fillFacts(facts, what, eps)
	return b, nil
}

// waitCluster asks the cluster about its members until it says all are up, ctx ends or
// platform.ReadyTimeout passes. Each question may take firstProbe, half as long again after
// each answer that was not yet (up to maxProbe): a node that refuses costs nothing, and a
// healthy node that answers slowly on a busy host (a JVM's new connection took more than 5 s
// in CI) is given the time to answer rather than asked again and again too briefly.
func waitCluster(ctx context.Context, c dbms.Clustered, t dbms.Topology, eps []driver.Endpoint, cred driver.Credentials) (map[string]string, error) {
	deadline := time.Now().Add(platform.ReadyTimeout)
	probe := firstProbe
	var last error
	for time.Now().Before(deadline) {
		qctx, cancel := context.WithTimeout(ctx, min(probe, max(time.Until(deadline), time.Millisecond)))
		facts, err := c.ClusterReady(qctx, t, eps, cred)
		cancel()
		if err == nil {
			return facts, nil
		}
		last = err
		probe = min(probe*3/2, maxProbe)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last answer: %v)", ctx.Err(), last)
		case <-time.After(readyPoll):
		}
	}
	return nil, fmt.Errorf("not after %s: %w", platform.ReadyTimeout, last)
}

// undo tears down what was started and returns err with the teardown's errors.
func (b *Box) undo(ctx context.Context, err error) error {
	tctx, cancel := platform.TeardownContext(ctx)
	defer cancel()
	return errors.Join(err, b.Teardown(tctx))
}

func (b *Box) fillFacts(cluster map[string]string, what string, eps []driver.Endpoint) {
	for k, v := range b.nodes[0].Facts() {
		b.facts[k] = v
	}
	for k, v := range cluster {
		b.facts[k] = v
	}
	names := make([]string, len(b.nodes))
	var eps2 []string
	for i := range b.nodes {
		names[i] = b.place.peers[i].Name
		eps2 = append(eps2, names[i]+"="+eps[i].String())
		nf := b.nodes[i].Facts()
		for _, k := range nodeFactKeys {
			if v, ok := nf[k]; ok {
				b.facts["node_"+names[i]+"_"+k] = v
			}
		}
		if cs := b.place.cpusets[i]; cs != "" {
			b.facts["node_"+names[i]+"_cpuset"] = cs
		}
	}
	sort.Strings(eps2)
	b.facts["topology_nodes"] = fmt.Sprint(len(b.nodes))
	b.facts["topology_endpoints"] = strings.Join(eps2, " ")
	b.facts["topology_client"] = what
	b.facts["topology_placement"] = b.place.how
	if b.place.network != "" {
		b.facts["topology_network"] = b.place.network
	}
}

// nodeFactKeys are the facts that differ between nodes and are kept per node.
// ran_on is where the node ran when its platform has machines of its own (a Kubernetes node).
var nodeFactKeys = []string{"endpoint", "container", "host_data_dir", "command", "config_hash", "network_path", "ran_on"}
