package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
)

// Box is a running cluster as one platform.Box: the client's endpoint knows every node it
// uses (driver.Endpoint.Members), and the first node stands for the cluster where a box has
// one answer (DataDir, Observe, Applied, Exec: every node has the same limits). Nodes gives
// each node's own box, for telemetry per node.
type Box struct {
	t       dbms.Topology
	d       dbms.DBMS
	nodes   []platform.Box // node order; nil entries for nodes that did not start
	place   *placed
	ep      driver.Endpoint
	facts   map[string]string
	release func(context.Context) error
	down    atomic.Bool
	// clientNodes are the nodes the client uses (dbms.Clustered.ClientNodes), the first first.
	clientNodes []int
}

var _ platform.Box = (*Box)(nil)

// Traits: every node, in order, and the client site of the cluster when its nodes' client
// runs at a site of their platform (site.go).
func (b *Box) Traits() platform.Traits {
	out := make([]platform.NamedBox, len(b.nodes))
	for i, n := range b.nodes {
		out[i] = platform.NamedBox{Name: b.place.peers[i].Name, Box: n}
	}
	// The nodes are boxes of one platform alike: the first stands for whether the CPU is
	// emulated and for what they recorded of their orchestrator.
	first := b.nodes[0].Traits()
	return platform.Traits{Nodes: out, Site: b.site(), Emulated: first.Emulated, Orchestrator: first.Orchestrator}
}

func (b *Box) Endpoint() driver.Endpoint     { return b.ep }
func (b *Box) DataDir() string               { return b.nodes[0].DataDir() }
func (b *Box) Observe() platform.Observation { return b.nodes[0].Observe() }
func (b *Box) Facts() map[string]string      { return b.facts }
func (b *Box) Exec(ctx context.Context, argv []string) ([]byte, error) {
	return b.nodes[0].Exec(ctx, argv)
}

// Applied is the first node's, read back, except the cpuset: the union of every node's (the
// server's cpus the cluster was given, split between the nodes when there were enough).
func (b *Box) Applied() resource.Applied {
	a := b.nodes[0].Applied()
	var all []int
	for _, n := range b.nodes {
		cs := n.Applied().Limits.Cpuset
		if cs == "" {
			return a // an unpinned node: nothing to unite
		}
		cpus, err := placement.ParseList(cs)
		if err != nil {
			return a
		}
		all = append(all, cpus...)
	}
	slices.Sort(all)
	a.Limits.Cpuset = placement.FormatList(slices.Compact(all))
	return a
}

// Warnings are every node's, one per code naming the nodes it concerns (a doubt about the third
// node is not hidden behind the first's of the same code), and the shared cpus when the host
// has too few for disjoint cpusets.
func (b *Box) Warnings() []platform.Warning {
	var out []platform.Warning
	if b.place.shared {
		out = append(out, platform.Warning{Code: "topology_shared_cpus",
			Message: "the cluster's nodes share cpus (" + b.place.how + "): they compete with each other, unlike nodes on machines of their own"})
	}
	type found struct{ names, msgs []string }
	var order []string
	byCode := map[string]*found{}
	for i, n := range b.nodes {
		if n == nil {
			continue
		}
		for _, w := range n.Warnings() {
			x := byCode[w.Code]
			if x == nil {
				x = &found{}
				byCode[w.Code] = x
				order = append(order, w.Code)
			}
			x.names = append(x.names, b.place.peers[i].Name)
			x.msgs = append(x.msgs, w.Message)
		}
	}
	for _, code := range order {
		out = append(out, platform.Warning{Code: code, Message: merge(byCode[code].names, byCode[code].msgs)})
	}
	return out
}

// merge is one message for the nodes names said msgs: "nodes n1, n2: m" when they say the
// same, "node n1: m1; node n2: m2" otherwise.
func merge(names, msgs []string) string {
	same := true
	for _, m := range msgs[1:] {
		same = same && m == msgs[0]
	}
	if same {
		if len(names) == 1 {
			return "node " + names[0] + ": " + msgs[0]
		}
		return "nodes " + strings.Join(names, ", ") + ": " + msgs[0]
	}
	parts := make([]string, len(msgs))
	for i := range msgs {
		parts[i] = "node " + names[i] + ": " + msgs[i]
	}
	return strings.Join(parts, "; ")
}

// LogTail returns the end of every node's log, each under its name, n bytes in all.
func (b *Box) LogTail(n int) string {
	var parts []string
	for i, nd := range b.nodes {
		if nd == nil {
			continue
		}
		if t := strings.TrimSpace(nd.LogTail(n / max(1, len(b.nodes)))); t != "" {
			parts = append(parts, "== node "+b.place.peers[i].Name+" ==\n"+t)
		}
	}
	return strings.Join(parts, "\n")
}

// Stop stops every node (the followers first would be kinder to a leader-based cluster, but
// the data is not captured anyway: see Capture).
func (b *Box) Stop(ctx context.Context) error {
	return b.each(func(i int, n platform.Box) error { return n.Stop(ctx) })
}

// Capture: a cluster's data directories carry each member's identity and cannot seed other
// boxes; a cluster is loaded in place.
func (b *Box) Capture(context.Context, string) error {
	return errors.New("a cluster's data cannot be captured as a seed (each data directory holds one member's identity)")
}

// Teardown tears every node down at once, then the cluster's network. Idempotent.
func (b *Box) Teardown(ctx context.Context) error {
	if !b.down.CompareAndSwap(false, true) {
		return nil
	}
	err := b.each(func(i int, n platform.Box) error { return n.Teardown(ctx) })
	return errors.Join(err, b.release(ctx))
}

// each runs f on every started node concurrently and joins the errors, each naming its node.
func (b *Box) each(f func(int, platform.Box) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(b.nodes))
	for i, n := range b.nodes {
		if n == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(i, n); err != nil {
				errs[i] = fmt.Errorf("node %s: %w", b.place.peers[i].Name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
