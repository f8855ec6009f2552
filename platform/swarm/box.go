package swarm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
	"github.com/boxbench/boxbench/platform/hostcg"
)

const stopTimeout = 60 * time.Second

type box struct {
	p       *Platform
	req     platform.Request
	img     image.Image
	facts   map[string]string
	layout  dbms.Layout
	ep      driver.Endpoint // from the host
	siteEP  driver.Endpoint // from the client's container on the overlay (overlay, vip)
	taskIP  string          // the task container's overlay address (fact task_ip), checkPath's first hop
	group   cgroup.Ref
	applied resource.Applied
	warns   []platform.Warning

	store      *storage.Dir // bind, tmpfs
	hostDir    string       // host path of the storage root
	dataOnHost string       // host path of the data directory
	volume     string       // storage=volume

	// life lives as long as the box (the wait for the task container's exit); Teardown ends it.
	life       context.Context
	cancelLife context.CancelFunc

	// at is the swarm node the task runs on, client the one the client's container runs on
	// (place, engines.go); both this host's engine on a single-node swarm.
	at, client *node

	mu      sync.Mutex
	service string // service id
	task    string // task container id
	network string // overlay network id (overlay, vip)
	netName string // its name
	// sharedNet: the network is a cluster's (ClusterNetwork), removed by the cluster, not the box.
	sharedNet bool
	helpers   []helper // helper containers (init, client) still to remove
	exited    chan struct{}
	exitCode  int64
	down      atomic.Bool
}

func (b *box) Endpoint() driver.Endpoint    { return b.ep }
func (b *box) DataDir() string              { return b.layout.DataDir }
func (b *box) Applied() resource.Applied    { return b.applied }
func (b *box) Warnings() []platform.Warning { return slices.Clone(b.warns) }
func (b *box) Facts() map[string]string     { return maps.Clone(b.facts) }

// Observe: the task container's group on this host, and the data's host directory.
// The task container's machinery as docker finds it (its shim, gVisor's processes).
func (b *box) Observe() platform.Observation {
	o := hostcg.Observation(b.group, b.dataOnHost)
	o.Parts = func(ctx context.Context) ([]platform.Part, error) {
		b.mu.Lock()
		task := b.task
		b.mu.Unlock()
		return b.at.d.ContainerParts(ctx, task)
	}
	return o
}

func (b *box) taskID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.task
}

// helper is a helper container and the engine it runs on.
type helper struct {
	id string
	d  *docker.Platform
}

func (b *box) addHelper(d *docker.Platform, id string) {
	b.mu.Lock()
	b.helpers = append(b.helpers, helper{id, d})
	b.mu.Unlock()
}

func (b *box) removeHelper(ctx context.Context, d *docker.Platform, id string) {
	ctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	if err := d.Remove(ctx, id); err != nil {
		b.req.Log.Warn("remove helper container", "id", id, "err", err) // Teardown tries again
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.helpers = slices.DeleteFunc(b.helpers, func(h helper) bool { return h.id == id })
}

func (b *box) warn(code, msg string) {
	b.warns = append(b.warns, platform.Warning{Code: code, Message: msg})
}

// Exec runs argv as root in the task container, in the data directory.
func (b *box) Exec(ctx context.Context, argv []string) ([]byte, error) {
	return b.at.d.Exec(ctx, b.taskID(), "root", b.layout.DataDir, argv, nil)
}

// LogTail is the end of the task container's log.
func (b *box) LogTail(n int) string {
	if b.at == nil {
		return ""
	}
	return b.at.d.LogTail(b.taskID(), n)
}

// Stop sends the database's clean-shutdown signal to the task container and waits for it to
// exit. The service's restart policy is "none", so the orchestrator does not start it again; the
// data stays in the host-side storage for Capture.
func (b *box) Stop(ctx context.Context) error {
	b.mu.Lock()
	id, exited := b.task, b.exited
	b.mu.Unlock()
	if b.at == nil {
		return nil
	}
	return docker.StopContainer(ctx, b.at.engine(), id, b.req.DBMS, exited)
}

// Capture copies the stopped server's data directory from its host-side storage (every storage
// of this platform is a host directory or a local volume's mountpoint).
func (b *box) Capture(ctx context.Context, dst string) error {
	if b.hostDir == "" {
		return errors.New("the box's storage has no host directory")
	}
	return storage.Capture(ctx, filepath.Join(b.hostDir, "db"), dst)
}

// Teardown removes the service and waits until its task containers, the helper containers, the
// overlay network and the volume are gone, releases the host storage and the work directory,
// and leaves the swarm when boxbench created it and this was its last service. Idempotent;
// every step runs even when an earlier one failed.
func (b *box) Teardown(ctx context.Context) error {
	if !b.down.CompareAndSwap(false, true) {
		return nil
	}
	ctx, cancel0 := platform.TeardownContext(ctx)
	defer cancel0()
	var errs []error
	errs = append(errs, platform.StopBeforeTeardown(ctx, b.Stop, 20*time.Second))
	b.cancelLife()
	b.mu.Lock()
	svc, helpers := b.service, slices.Clone(b.helpers)
	b.mu.Unlock()
	// Each step has a bound of its own: one that runs out its time must not leave the next
	// (the volume, last) no time at all.
	if svc != "" {
		errs = append(errs, bounded(ctx, func(ctx context.Context) error { return b.p.removeService(ctx, svc) }))
	}
	// The task containers carry the run's labels; so do the helpers. The filter finds a task
	// container this box never learnt the id of (a provision cut short).
	for _, d := range b.engines() {
		errs = append(errs, bounded(ctx, func(ctx context.Context) error {
			return removeContainers(ctx, d, filters.NewArgs(
				filters.Arg("label", docker.LabelExperiment+"="+b.req.Experiment),
				filters.Arg("label", docker.LabelRun+"="+b.req.Run)))
		}))
	}
	for _, h := range helpers {
		errs = append(errs, bounded(ctx, func(ctx context.Context) error { return h.d.Remove(ctx, h.id) }))
	}
	errs = append(errs, bounded(ctx, b.removeNetwork))
	if b.volume != "" {
		errs = append(errs, bounded(ctx, func(ctx context.Context) error {
			return retry(ctx, "remove volume "+b.volume, func() error {
				err := b.at.engine().VolumeRemove(ctx, b.volume, true)
				if cerrdefs.IsNotFound(err) {
					return nil
				}
				return err
			})
		}))
	}
	if b.store != nil {
		errs = append(errs, b.store.Release(ctx))
	}
	if storage.IsMountPoint(filepath.Join(b.req.WorkDir, "data")) {
		errs = append(errs, fmt.Errorf("not removing %s: its storage is still mounted", b.req.WorkDir))
	} else if b.req.WorkDir != "" {
		errs = append(errs, os.RemoveAll(b.req.WorkDir))
	}
	_, err := b.p.release(ctx, false)
	return errors.Join(append(errs, err)...)
}

// engines are the engines that may hold the box's containers: this host's (helpers), the task's
// and the client's.
func (b *box) engines() []*docker.Platform {
	ds := []*docker.Platform{b.p.d}
	for _, n := range []*node{b.at, b.client} {
		if n != nil && !slices.Contains(ds, n.d) {
			ds = append(ds, n.d)
		}
	}
	return ds
}

// removeNetwork removes the box's overlay network, waiting while the engine still releases the
// endpoints of the containers just removed.
func (b *box) removeNetwork(ctx context.Context) error {
	b.mu.Lock()
	id, shared := b.network, b.sharedNet
	b.mu.Unlock()
	if id == "" || shared {
		return nil
	}
	return removeNetwork(ctx, b.p.engine, id, b.netName)
}

// removeNetwork removes network id (name, for the error) and returns once the engine no longer
// knows it: a removed overlay network stays listed on the node a moment after the remove
// returns, and release keeps the swarm while a cluster's network is listed.
func removeNetwork(ctx context.Context, engine client.NetworkAPIClient, id, name string) error {
	for {
		_, err := engine.NetworkInspect(ctx, id, network.InspectOptions{})
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		if err == nil {
			err = engine.NetworkRemove(ctx, id)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("remove network %s: %v (%w)", name, err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// bounded runs one removal step with removeTimeout of its own.
func bounded(ctx context.Context, step func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	return step(ctx)
}

// retry calls f until it succeeds or ctx ends: the engine releases a removed container's
// volume and network endpoints a moment after the container is gone.
func retry(ctx context.Context, what string, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %v (%w)", what, err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
