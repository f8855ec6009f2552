package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/platform/docker"
)

// A swarm of several engines (docs/swarm.md, "A swarm of several engines"). By default the
// platform uses the docker platform's engine and a single-node swarm on it. With EnvHost set it
// uses the swarm whose manager that engine is, which boxbench neither initialises nor leaves,
// and places every box's task on a node of its own: a cluster's node i on the swarm's node i
// (nodes sorted by host name), the client's container on the node after the cluster's last,
// or, when there is none, on the last node with a warning. boxbench reaches a node's engine
// (its task containers, their groups, volumes, images, the client's container) through the
// socket its LabelEngine names; scripts/swarm-multi.sh sets it. An engine that lacks the
// database's image gets it from the docker platform's engine (save, load; by image id).

// EnvHost names the manager engine of the swarm the platform uses (unix:///path), instead of
// the docker platform's engine (DOCKER_HOST).
const EnvHost = "BOXBENCH_SWARM_HOST"

// LabelEngine is the swarm node label that names the node's engine (unix:///path).
const LabelEngine = "boxbench.engine"

// node is a swarm node a box uses, with its engine.
type node struct {
	ID, Hostname, Addr string
	d                  *docker.Platform // its engine (the docker platform's for a single-node swarm)
}

func (n *node) engine() client.APIClient { return n.d.Engine() }

// where says which node, for facts and messages.
func (n *node) where() string {
	if n.Hostname == "" {
		return "swarm node " + n.ID + " (this host's engine)"
	}
	return fmt.Sprintf("swarm node %s (%s, engine %s)", n.Hostname, n.Addr, n.d.Engine().DaemonHost())
}

// engines connects to node engines, once per socket.
type engines struct {
	mu  sync.Mutex
	log *slog.Logger
	by  map[string]*docker.Platform
	// loading serialises the image copies into one engine (a cluster's nodes check their paths
	// from the client's node at once: one copy, not three).
	loading map[*docker.Platform]*sync.Mutex
}

func (e *engines) loadLock(d *docker.Platform) *sync.Mutex {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.loading == nil {
		e.loading = map[*docker.Platform]*sync.Mutex{}
	}
	if e.loading[d] == nil {
		e.loading[d] = &sync.Mutex{}
	}
	return e.loading[d]
}

func (e *engines) get(host string) (*docker.Platform, error) {
	if err := checkEngineHost(host); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := e.by[host]; d != nil {
		return d, nil
	}
	c, err := client.NewClientWithOpts(client.WithHost(host), client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("engine %s: %w", host, err)
	}
	if e.by == nil {
		e.by = map[string]*docker.Platform{}
	}
	e.by[host] = docker.New(image.Bound(c), e.log)
	return e.by[host], nil
}

// checkEngineHost accepts unix:// and an absolute, clean path: the engines of a swarm boxbench
// spreads boxes over are on this host (their groups and storage are).
func checkEngineHost(host string) error {
	p, ok := strings.CutPrefix(host, "unix://")
	if !ok || !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.ContainsAny(p, "\x00\n") {
		return fmt.Errorf("engine %q is not valid (valid: unix:///absolute/path/of/a/socket on this host)", host)
	}
	return nil
}

// swarmNodes lists the swarm's ready nodes by host name, each with its engine.
func (p *Platform) swarmNodes(ctx context.Context) ([]*node, error) {
	ns, err := p.engine.NodeList(ctx, swarm.NodeListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the swarm's nodes: %w", err)
	}
	var out []*node
	var errs []error
	for _, n := range ns {
		if n.Status.State != swarm.NodeStateReady || n.Spec.Availability != swarm.NodeAvailabilityActive {
			continue
		}
		host := n.Spec.Labels[LabelEngine]
		if host == "" {
			errs = append(errs, fmt.Errorf("swarm node %s has no label %s naming its engine (scripts/swarm-multi.sh sets it)", n.Description.Hostname, LabelEngine))
			continue
		}
		d, err := p.nodeEngines.get(host)
		if err != nil {
			errs = append(errs, fmt.Errorf("swarm node %s: label %s: %w", n.Description.Hostname, LabelEngine, err))
			continue
		}
		out = append(out, &node{ID: n.ID, Hostname: n.Description.Hostname, Addr: n.Status.Addr, d: d})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("the swarm has no ready, active node")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hostname < out[j].Hostname })
	return out, nil
}

// place chooses the box's node and its client's. On a single-node swarm both are this host's
// engine. Across engines: a cluster's node i (Request.Node.Index) on node i mod n, the client on
// the node after the cluster's last; a node shared with another member or with the client is a
// warning, never silent.
func (b *box) place(ctx context.Context) error {
	if !b.p.multi {
		b.at = &node{d: b.p.d}
		b.client = b.at
		return nil
	}
	ns, err := b.p.swarmNodes(ctx)
	if err != nil {
		return err
	}
	i, count := 0, 1
	if n := b.req.Node; n != nil {
		i, count = n.Index, max(n.Count, 1)
	}
	b.at = ns[i%len(ns)]
	b.client = ns[min(count, len(ns)-1)]
	if count > len(ns) {
		b.warn("swarm_nodes_shared", fmt.Sprintf("the swarm has %d nodes for %d members: members share a node", len(ns), count))
	}
	if b.at == b.client {
		b.warn("client_shares_node", fmt.Sprintf("the client runs on %s with this member: the swarm has %d nodes, a cluster of %d needs %d for a client of its own",
			b.client.Hostname, len(ns), count, count+1))
	}
	b.facts["ran_on"] = b.at.where()
	b.facts["client_ran_on"] = b.client.where()
	return nil
}

// ensureImage makes sure n's engine holds the box's image, copying it from the docker
// platform's engine when it does not (the same image id: the service names the image by id).
func (b *box) ensureImage(ctx context.Context, n *node) error {
	if n.d == b.p.d {
		return nil
	}
	mu := b.p.nodeEngines.loadLock(n.d)
	mu.Lock()
	defer mu.Unlock()
	if _, err := n.engine().ImageInspect(ctx, b.img.ID); err == nil {
		return nil
	} else if !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("image %s on %s: %w", b.img.Ref, n.where(), err)
	}
	rc, err := b.p.d.Engine().ImageSave(ctx, []string{b.img.Ref})
	if err != nil {
		return fmt.Errorf("save image %s from this host's engine: %w", b.img.Ref, err)
	}
	defer rc.Close()
	res, err := n.engine().ImageLoad(ctx, rc)
	if err != nil {
		return fmt.Errorf("load image %s into %s: %w", b.img.Ref, n.where(), err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if _, err := n.engine().ImageInspect(ctx, b.img.ID); err != nil {
		return fmt.Errorf("image %s loaded into %s is not there by its id %s: %w", b.img.Ref, n.where(), b.img.ID, err)
	}
	b.req.Log.Info("copied the image into a node's engine", "image", b.img.Ref, "node", n.Hostname)
	return nil
}
