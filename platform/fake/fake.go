// Package fake is an in-memory platform: a test double at the platform seam (like k6's mock
// output), so that the runner's branching — a failure in each phase, cancellation, duets,
// remote clients, clusters, neighbours — is tested without root, engines or databases. Its
// boxes serve the fake database (DBMS, driven by the built-in generator through Open) from this
// process on loopback ports; what it can do is data (Options), like any platform's Info and
// Traits; faults are injected by name (Options.Fault).
//
// It is never wired into builtin: a test lists it in its own platforms and adds the fake
// database as a row (builtin.With). Everything it makes is in memory except each box's work
// directory, which Teardown and Cleanup remove.
package fake

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/boxbench/boxbench/platform"
)

// Name is the fake platform's name in specs.
const Name = "fake"

// Fault points: Options.Fault is asked at each with the request of the box concerned.
const (
	FaultCheck     = "check"     // Check refuses the choice
	FaultProvision = "provision" // Provision fails before the server starts
	FaultServe     = "serve"     // the server's operations: point "serve:<op>" (ping, setup, read, scan, update, insert)
	FaultStop      = "stop"      // Box.Stop
	FaultCapture   = "capture"   // Box.Capture
	FaultTeardown  = "teardown"  // Box.Teardown (the box is removed anyway)
	FaultExec      = "exec"      // Box.Exec
)

// Options are what the fake platform can do, as data.
type Options struct {
	Name string // "" = Name
	// Fault returns the error to inject at point for the box of request r, nil for none. It
	// is called from several goroutines.
	Fault func(point string, r platform.Request) error
	// Cluster offers topologies (Info.Cluster) on the host's network.
	Cluster bool
	// Agent gives every box a client site where the agent runs in this process, through the
	// agent's own protocol: it reads a job on stdin and writes the reply on stdout, as
	// agent.Serve does (the test passes it, so that this platform, below the agent, does not
	// import it); nil: the client runs in the runner's process.
	Agent func(ctx context.Context, stdin io.Reader, stdout io.Writer) error
	// Emulated marks every box's CPU as emulated (platform.Traits.Emulated).
	Emulated bool
	// Orchestrator is what every box records of an orchestrator (platform.Traits'), each of
	// its facts also one of the box's Facts; nil: none.
	Orchestrator *platform.Orchestrator
	// Warnings are every box's doubts.
	Warnings []platform.Warning
}

// Platform is the fake platform. Its zero value is not usable: call New.
type Platform struct {
	o     Options
	mu    sync.Mutex
	boxes map[*Box]bool // live boxes, for Cleanup and Live
}

var _ platform.Platform = (*Platform)(nil)

// New returns a fake platform with options o.
func New(o Options) *Platform {
	if o.Name == "" {
		o.Name = Name
	}
	return &Platform{o: o, boxes: map[*Box]bool{}}
}

// Info: one storage ("memory") and one network ("host"); it loads seeds; topologies when
// Options.Cluster.
func (p *Platform) Info() platform.Info {
	i := platform.Info{Name: p.o.Name, Storages: []string{"memory"}, Networks: []string{"host"},
		Load: &platform.Choice{Storage: "memory", Network: "host"}, Fallback: map[string]string{}}
	if p.o.Cluster {
		i.Cluster = p
	}
	return i
}

func (p *Platform) fault(point string, r platform.Request) error {
	if p.o.Fault == nil {
		return nil
	}
	if err := p.o.Fault(point, r); err != nil {
		return fmt.Errorf("fake %s: %w", point, err)
	}
	return nil
}

// Check refuses what it does not offer, and what Options.Fault says.
func (p *Platform) Check(_ context.Context, c platform.Choice) error {
	if !p.Info().Offers(c.Storage, c.Network) {
		return fmt.Errorf("fake offers storage memory and network host, not storage=%s network=%s", c.Storage, c.Network)
	}
	return p.fault(FaultCheck, platform.Request{Choice: c})
}

// ClusterNetwork: the nodes share the host's network (loopback ports).
func (p *Platform) ClusterNetwork(context.Context, platform.Request) (string, func(context.Context) error, error) {
	return "", func(context.Context) error { return nil }, nil
}

// NodeAddress: "" — the fake makes no network of its own (ClusterNetwork returns ""), so it is
// never asked for one.
func (p *Platform) NodeAddress(context.Context, string, int) (string, error) { return "", nil }

// ClusterRefuses: every network can carry a cluster.
func (p *Platform) ClusterRefuses() map[string]string { return nil }

// Live is the number of boxes provisioned and not torn down: 0 after every run proves the
// runner's teardown on every path.
func (p *Platform) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.boxes)
}

// Cleanup tears down the live boxes of crashed experiments (a crashed process's boxes are gone
// with it; a test's "crash" leaves them here).
func (p *Platform) Cleanup(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	p.mu.Lock()
	var doomed []*Box
	for b := range p.boxes {
		if crashed(b.req.Experiment) {
			doomed = append(doomed, b)
		}
	}
	p.mu.Unlock()
	var gone []string
	for _, b := range doomed {
		_ = b.Teardown(ctx)
		gone = append(gone, "fake box "+b.req.Experiment+"/"+b.req.Run)
	}
	return gone, nil
}

// Provision starts a box: its work directory, then (unless the database is idle) a store
// restored from the seed, listening on a loopback port (the node's reserved port in a
// cluster), ready when it answers.
func (p *Platform) Provision(ctx context.Context, r platform.Request) (platform.Box, error) {
	if err := p.fault(FaultProvision, r); err != nil {
		return nil, err
	}
	b := &Box{p: p, req: r}
	if err := os.MkdirAll(r.WorkDir, 0o700); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.boxes[b] = true
	p.mu.Unlock()
	if err := b.start(ctx); err != nil {
		return nil, platform.Undo(ctx, b, err)
	}
	return b, nil
}
