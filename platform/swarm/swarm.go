// Package swarm runs a database as a single-replica Docker Swarm service of the same image,
// configuration and limits as the docker platform, through the engine's API (the official Go
// SDK). It is built on package docker: images, labels, data directory initialisation and
// restore, exec, log tails and the container removal are that package's.
//
// What a cell asks for:
//
//   - network: host (the service on the engine's host network; the server listens on a free
//     loopback port, as the docker platform's host mode), overlay (the task on an overlay
//     network of the box's own; the client reaches the task's overlay address from a container
//     attached to the same network: ClientSite), vip (the same, through the service's virtual
//     IP, which needs IPVS in the kernel; without it the cell is unavailable with the reason);
//   - storage: volume (a labelled volume of the local driver, filled before the service starts),
//     bind (a host directory made like the native one), tmpfs (a host tmpfs, as on docker);
//   - limits: cpus and memory as service resources (reservations = limits); the cpuset, the CPU
//     weight and the I/O weight and caps, which a service spec cannot say, are written into the
//     task container's group after it starts; everything is read back from that group.
//
// The swarm is the engine's (cluster.go): boxbench initialises a single-node one on the
// loopback address when none is active, and leaves it when its last box is gone, only when it
// created it. Every service, container, network and volume carries the labels boxbench=1,
// boxbench.experiment and boxbench.run (docker.Labels).
package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
)

// Name is the platform's name in specs.
const Name = "swarm"

// Storage and network choices.
const (
	StorageVolume = docker.StorageVolume
	StorageBind   = storage.Bind
	StorageTmpfs  = storage.Tmpfs

	NetworkHost    = "host"
	NetworkOverlay = "overlay"
	NetworkVIP     = "vip"
)

// removeTimeout bounds each wait of a teardown (a service's tasks going, a network's endpoints).
const removeTimeout = 60 * time.Second

// Platform is the Swarm platform.
type Platform struct {
	// Trial is the database Probe and doctor's trial provision when a choice names none: a
	// small one that starts fast. The wiring sets it (a platform names no database); nil
	// refuses such a probe.
	Trial dbms.DBMS

	d      *docker.Platform
	engine client.APIClient // the swarm's manager: the docker platform's engine unless EnvHost names one
	log    *slog.Logger
	// multi: the swarm is EnvHost's, of several engines (engines.go); boxbench neither
	// initialises nor leaves it. hostErr is why EnvHost could not be used.
	multi       bool
	hostErr     error
	nodeEngines engines

	mu      sync.Mutex
	section Section // the spec's swarm: block (bridges.go)
}

// New returns the platform over the docker platform d (its engine and images).
func New(d *docker.Platform, log *slog.Logger) *Platform {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p := &Platform{d: d, engine: d.Engine(), log: log, nodeEngines: engines{log: log}}
	// Like DOCKER_HOST for the docker platform: the environment names the engine.
	if h := os.Getenv(EnvHost); h != "" {
		if m, err := p.nodeEngines.get(h); err != nil {
			p.hostErr = fmt.Errorf("%s: %w", EnvHost, err)
		} else {
			p.engine, p.multi = m.Engine(), true
		}
	}
	return p
}

// Info: task containers of a local engine are groups on this host's tree. A service spec has
// no OCI runtime field (the engine's default runtime runs every task), so no runtime key.
func (p *Platform) Info() platform.Info {
	return platform.Info{Name: Name, Cluster: p, Prober: p, Diagnoser: p, BoxCleaner: p, Settings: p, Leftovers: p,
		Setup:      []string{"docker", "images"},
		Storages:   []string{StorageVolume, StorageBind, StorageTmpfs},
		Networks:   []string{NetworkHost, NetworkOverlay, NetworkVIP},
		HostCgroup: true,
		Load:       &platform.Choice{Storage: StorageBind, Network: NetworkHost},
		Fallback:   map[string]string{docker.StorageOverlay: StorageVolume}}
}

// Check says why c cannot run here without starting anything: the engine, a swarm this engine
// cannot manage, a kernel without what the network needs.
func (p *Platform) Check(ctx context.Context, c platform.Choice) error {
	var errs []error
	if p.hostErr != nil {
		return p.hostErr
	}
	switch c.Storage {
	case StorageVolume, StorageBind, StorageTmpfs:
		if !p.d.EngineIsLocal() {
			errs = append(errs, fmt.Errorf("swarm storage %s needs the engine on this host (DOCKER_HOST is %s)", c.Storage, p.engine.DaemonHost()))
		}
	default:
		errs = append(errs, fmt.Errorf("swarm does not support storage %q (valid: volume, bind, tmpfs)", c.Storage))
	}
	switch c.Network {
	case NetworkHost:
	case NetworkOverlay:
		if err := kernelHas("CONFIG_VXLAN", "overlay networks carry traffic between nodes in VXLAN, and the engine creates them with it"); err != nil {
			errs = append(errs, err)
		}
	case NetworkVIP:
		if err := kernelHas("CONFIG_IP_VS", "the service's virtual IP and the ingress routing mesh are IPVS load balancers"); err != nil {
			errs = append(errs, fmt.Errorf("%w; the engine accepts a VIP service, but its virtual IP does not answer (`boxbench doctor` shows the trial)", err))
		}
	default:
		errs = append(errs, fmt.Errorf("swarm does not support network %q (valid: host, overlay, vip)", c.Network))
	}
	if c.Runtime != "" {
		errs = append(errs, fmt.Errorf("swarm services run the engine's default runtime: a service spec has no runtime (runtime=%s)", c.Runtime))
	}
	info, err := p.engine.Info(ctx)
	if err != nil {
		return errors.Join(append(errs, image.EngineError(p.engine, err))...)
	}
	switch sw := info.Swarm; sw.LocalNodeState {
	case swarm.LocalNodeStateInactive:
		if p.multi {
			errs = append(errs, fmt.Errorf("the engine %s names (%s) is in no swarm (scripts/swarm-multi.sh up makes one)", EnvHost, p.engine.DaemonHost()))
		}
	case swarm.LocalNodeStateActive:
		if !sw.ControlAvailable {
			errs = append(errs, fmt.Errorf("this engine is a swarm worker (node %s), not a manager: services cannot be created here", sw.NodeID))
		}
	default:
		errs = append(errs, fmt.Errorf("the engine's swarm is %s (%s)", sw.LocalNodeState, sw.Error))
	}
	if c.DBMS != nil {
		errs = append(errs, p.d.CheckImage(ctx, c.DBMS)) // the services run the Docker platform's image
	}
	return errors.Join(errs...)
}

// Provision creates the storage, the network and the service, waits for its task and the
// server, and reads back what took effect. On error everything it created is removed.
func (p *Platform) Provision(ctx context.Context, r platform.Request) (platform.Box, error) {
	if r.Log == nil {
		r.Log = p.log
	}
	b := &box{p: p, req: r, facts: map[string]string{"platform": Name}}
	b.life, b.cancelLife = context.WithCancel(context.WithoutCancel(ctx))
	if err := b.provision(ctx); err != nil {
		return nil, fmt.Errorf("swarm %s/%s: %w", r.Storage, r.Network, platform.Undo(ctx, b, err))
	}
	return b, nil
}

// Cleanup removes the services, task containers, networks and volumes of crashed experiments,
// leaves the swarm when boxbench created it and nothing is left on it, then removes their work
// directories (platform.CleanupWorkRoot).
func (p *Platform) Cleanup(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	return platform.CleanupWith(ctx, p, workRoot, crashed)
}

// CleanupBoxes is Cleanup without the work-root step: services first (their tasks would come
// back otherwise), then the docker platform's removal of labelled containers, volumes and
// networks, swarm's included (the docker platform's own cleanup leaves those to this one), then
// the swarm itself if boxbench created it and no service is left.
func (p *Platform) CleanupBoxes(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	var done []string
	var errs []error
	info, err := p.engine.Info(ctx)
	if err != nil {
		return nil, image.EngineError(p.engine, err)
	}
	var runs []filters.Args
	if info.Swarm.LocalNodeState == swarm.LocalNodeStateActive && info.Swarm.ControlAvailable {
		svcs, err := p.engine.ServiceList(ctx, swarm.ServiceListOptions{
			Filters: filters.NewArgs(filters.Arg("label", docker.LabelBoxbench+"=1"))})
		errs = append(errs, err)
		for _, s := range svcs {
			exp, ok := s.Spec.Labels[docker.LabelExperiment]
			if !ok || !crashed(exp) {
				continue
			}
			if err := bounded(ctx, func(ctx context.Context) error { return p.removeService(ctx, s.ID) }); err != nil {
				errs = append(errs, fmt.Errorf("service %s: %w", s.Spec.Name, err))
				continue
			}
			done = append(done, fmt.Sprintf("service %s (experiment %s)", s.Spec.Name, exp))
			runs = append(runs, filters.NewArgs(filters.Arg("label", docker.LabelExperiment+"="+exp),
				filters.Arg("label", docker.LabelRun+"="+s.Spec.Labels[docker.LabelRun])))
		}
	}
	// Across engines, every node's engine holds task and client containers, volumes.
	ds := []*docker.Platform{p.d}
	if p.multi {
		ns, err := p.swarmNodes(ctx)
		errs = append(errs, err)
		for _, n := range ns {
			ds = append(ds, n.d)
		}
	}
	// The engine stops a removed service's tasks by itself; wait for that rather than race it.
	for _, f := range runs {
		for _, d := range ds {
			errs = append(errs, bounded(ctx, func(ctx context.Context) error { return removeContainers(ctx, d, f) }))
		}
	}
	// Networks whose endpoints the engine still releases are retried for a while.
	removedNet := false
	for _, d := range ds {
		for i := 0; ; i++ {
			gone, err := d.CleanupLabelled(ctx, crashed, true)
			done = append(done, gone...)
			for _, g := range gone {
				removedNet = removedNet || strings.HasPrefix(g, "network ")
			}
			if err == nil || i == 20 || !strings.Contains(err.Error(), "active endpoints") {
				errs = append(errs, err)
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	gone, err := p.release(ctx, removedNet)
	return append(done, gone...), errors.Join(append(errs, err)...)
}

// removeService removes a service and waits until the orchestrator has no task of it left: a
// task it had assigned may still get its container after the removal, which then holds the
// volume and the network.
//
// A service cannot outlive its swarm: when this node is no longer a manager of an active swarm
// (the swarm was left or lost under the box), the service and its tasks are gone with it and
// there is nothing to wait for — the task containers, network and volume are removed by the
// caller's next steps.
func (p *Platform) removeService(ctx context.Context, id string) error {
	if err := p.engine.ServiceRemove(ctx, id); err != nil && !cerrdefs.IsNotFound(err) {
		if !p.manager(ctx) {
			return nil
		}
		return fmt.Errorf("remove service %s: %w", id, err)
	}
	// Not filtered by service: the engine refuses that filter once the service is gone.
	return retry(ctx, "wait for the tasks of service "+id, func() error {
		ts, err := p.engine.TaskList(ctx, swarm.TaskListOptions{})
		if err != nil && !p.manager(ctx) {
			return nil
		}
		n := 0
		for _, t := range ts {
			if t.ServiceID == id {
				n++
			}
		}
		if err == nil && n > 0 {
			err = fmt.Errorf("%d task(s) left", n)
		}
		return err
	})
}

// manager says whether this engine is a manager of an active swarm (true when it cannot tell:
// the caller then keeps its error).
func (p *Platform) manager(ctx context.Context) bool {
	info, err := p.engine.Info(ctx)
	return err != nil || info.Swarm.LocalNodeState == swarm.LocalNodeStateActive && info.Swarm.ControlAvailable
}

// removeContainers force-removes the containers of d's engine that match f (a service's task
// containers) and waits until the engine no longer lists any.
func removeContainers(ctx context.Context, d *docker.Platform, f filters.Args) error {
	for {
		if ctx.Err() != nil {
			return fmt.Errorf("task containers still there: %w", ctx.Err())
		}
		cs, err := d.Engine().ContainerList(ctx, container.ListOptions{All: true, Filters: f})
		if err == nil && len(cs) == 0 {
			return nil
		}
		var errs []error
		for _, c := range cs {
			errs = append(errs, d.Remove(ctx, c.ID))
		}
		if err == nil && errors.Join(errs...) == nil {
			continue // list again: the engine may have started a replacement meanwhile
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("task containers still there: %v: %w", errors.Join(append(errs, err)...), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
