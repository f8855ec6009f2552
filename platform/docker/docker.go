// Package docker runs a database in a container through the Docker Engine API (the official Go
// SDK; podman's Docker-compatible socket is the same code: DOCKER_HOST names either).
//
// The container runs the image boxbench built from the same Debian packages as the native host
// (package image), the same start command and the same configuration files, written into the
// data directory exactly as natively, under the same limits. What varies is what a cell asks
// for:
//
//   - storage: overlay (the container's writable layer), bind (a host directory made like the
//     native one), volume (an engine-managed named volume), tmpfs (a host tmpfs bind-mounted; see
//     tmpfsChoice), blockdev (a dedicated filesystem on a loop device or a named device,
//     bind-mounted);
//   - network: host, bridge-published (a published port on 127.0.0.1, through the engine's
//     userland proxy or NAT), bridge-direct (the container's own bridge address); both bridge
//     modes on a bridge network of the box's own, not the engine's default one (network.go);
//   - runtime: any OCI runtime the engine has registered (HostConfig.Runtime).
//
// Every container, volume and network carries the labels boxbench=1, boxbench.experiment and
// boxbench.run, so Cleanup can find what a crashed experiment left. Spec values reach the engine
// as API fields, never through a shell.
package docker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
)

// Storage and network choices this platform knows.
const (
	StorageOverlay = "overlay"
	StorageBind    = storage.Bind
	StorageVolume  = "volume"
	StorageTmpfs   = storage.Tmpfs
	StorageBlock   = storage.Blockdev

	NetworkHost      = "host"
	NetworkPublished = "bridge-published"
	NetworkDirect    = "bridge-direct"
)

// Labels on every container and volume boxbench creates.
const (
	LabelBoxbench   = image.LabelBoxbench // "1"
	LabelExperiment = "boxbench.experiment"
	LabelRun        = "boxbench.run"
	LabelRole       = "boxbench.role" // "server", "init" (initialises a data directory), "probe"
	// LabelPlatform marks what another platform of the same engine made (e.g. "swarm"), so
	// this platform's cleanup leaves it to that one.
	LabelPlatform = "boxbench.platform"
)

// ProbeExperiment is the experiment label of runtime probe containers, for Cleanup.
const ProbeExperiment = "probe"

// tmpfsChoice documents how storage=tmpfs is made. A host tmpfs (storage.Prepare) bind-mounted
// into the container, not an engine tmpfs mount, because:
//   - parity: the native baseline uses the very same kind of mount with the same size option;
//   - an engine tmpfs exists only while the container runs, so a seed cannot be restored into it
//     before the server starts, and Capture after Stop would find it gone;
//   - memory accounting stays the same as natively: the restored seed's pages are charged where
//     the copy ran (outside the box), the server's own writes to the box's cgroup.
const tmpfsChoice = "host tmpfs bind-mounted (same mount as native; restorable before start, capturable after stop)"

// Paths inside the container (platform.Box*).
const (
	ctrRoot   = platform.BoxRoot
	dataMount = platform.BoxDataMount
	dataDir   = platform.BoxDataDir
	runDir    = platform.BoxRunDir
)

// Platform is the Docker platform.
type Platform struct {
	engine client.APIClient
	images *image.Store
	log    *slog.Logger

	// forceVolumeCopy fills volumes through the API even when their mountpoint is visible (tests
	// use it to cover the path a remote or non-local engine takes).
	forceVolumeCopy bool

	mu    sync.Mutex
	named map[string]string // dbms → user-named image reference
	cache map[string]image.Image
	// info is the engine's description Check last read, at infoAt (see engineInfo).
	info   system.Info
	infoAt time.Time
}

// engineInfo is the engine's description for Check, read at most once per infoFresh: a plan
// of a thousand runtimes asked the engine a thousand times (about a minute on a busy host).
func (p *Platform) engineInfo(ctx context.Context) (system.Info, error) {
	p.mu.Lock()
	if !p.infoAt.IsZero() && time.Since(p.infoAt) < infoFresh {
		defer p.mu.Unlock()
		return p.info, nil
	}
	p.mu.Unlock()
	info, err := p.engine.Info(ctx)
	if err != nil {
		return info, err
	}
	p.mu.Lock()
	p.info, p.infoAt = info, time.Now()
	p.mu.Unlock()
	return info, nil
}

const infoFresh = 5 * time.Second

// New returns the platform over engine (see image.Connect).
func New(engine client.APIClient, log *slog.Logger) *Platform {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Platform{engine: engine, images: image.NewStore(engine, log), log: log,
		named: map[string]string{}, cache: map[string]image.Image{}}
}

// Engine is the engine client the platform uses (platforms built on the same engine share it).
func (p *Platform) Engine() client.APIClient { return p.engine }

// EngineIsLocal says the engine runs on this host, so host directories can be bind-mounted.
func (p *Platform) EngineIsLocal() bool { return p.engineIsLocal() }

// UseImage makes boxes of the named dbms run ref (a user-named image such as "postgres:16")
// instead of the image boxbench builds. Its digest is recorded and a warning says that native
// and container versions differ.
func (p *Platform) UseImage(dbmsName, ref string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.named[dbmsName] = ref
	delete(p.cache, dbmsName)
}

// Image returns the image boxes of d run: the user-named one, or the built one for the current
// inputs (an error wrapping image.ErrNotBuilt says how to build it).
func (p *Platform) Image(ctx context.Context, d dbms.DBMS) (image.Image, error) {
	p.mu.Lock()
	im, ok := p.cache[d.Name()]
	ref := p.named[d.Name()]
	p.mu.Unlock()
	if ok {
		return im, nil
	}
	im, err := p.images.For(ctx, ref, d)
	if err != nil {
		return im, err
	}
	p.mu.Lock()
	p.cache[d.Name()] = im
	p.mu.Unlock()
	return im, nil
}

// Name is the platform's name in specs.
const Name = "docker"

// Info: containers of a local engine are groups on this host's tree; any registered OCI runtime.
func (p *Platform) Info() platform.Info {
	return platform.Info{Name: Name, Cluster: p, Prober: p, Diagnoser: p, BoxCleaner: p, Leftovers: p,
		Setup:    []string{"docker", "images"},
		Storages: []string{StorageOverlay, StorageBind, StorageVolume, StorageTmpfs, StorageBlock},
		Networks: []string{NetworkHost, NetworkPublished, NetworkDirect}, Runtimes: true, HostCgroup: true,
		Load: &platform.Choice{Storage: StorageBind, Network: NetworkHost}}
}

// Check says why c cannot run here, asking the engine (info only: nothing is started).
func (p *Platform) Check(ctx context.Context, c platform.Choice) error {
	var errs []error
	switch c.Storage {
	case StorageOverlay, StorageVolume:
	case StorageBind, StorageTmpfs, StorageBlock:
		if !p.engineIsLocal() {
			errs = append(errs, fmt.Errorf("storage %s needs the engine on this host (DOCKER_HOST is %s)", c.Storage, p.engine.DaemonHost()))
		}
	default:
		errs = append(errs, fmt.Errorf("docker does not support storage %q (valid: overlay, bind, volume, tmpfs, blockdev)", c.Storage))
	}
	switch c.Network {
	case NetworkHost, NetworkPublished, NetworkDirect:
	default:
		errs = append(errs, fmt.Errorf("docker does not support network %q (valid: host, bridge-published, bridge-direct)", c.Network))
	}
	info, err := p.engineInfo(ctx)
	if err != nil {
		return errors.Join(append(errs, image.EngineError(p.engine, err))...)
	}
	rt := c.Runtime
	if rt == "" {
		rt = info.DefaultRuntime
	}
	if _, ok := info.Runtimes[rt]; !ok && c.Runtime != "" {
		errs = append(errs, fmt.Errorf("runtime %q is not registered with the engine (registered: %s)", c.Runtime,
			strings.Join(runtimeNames(info.Runtimes), ", ")))
	} else {
		errs = append(errs, describeRuntime(rt, info.Runtimes).check(c))
	}
	if c.DBMS != nil {
		errs = append(errs, p.CheckImage(ctx, c.DBMS))
	}
	return errors.Join(errs...)
}

// CheckImage says whether the image boxes of d run is here: nil for a user-named one (taken as
// it is at provision), an error carrying a prereq.Need when boxbench's own is not built yet.
func (p *Platform) CheckImage(ctx context.Context, d dbms.DBMS) error {
	p.mu.Lock()
	named := p.named[d.Name()] != ""
	p.mu.Unlock()
	if named {
		return nil
	}
	_, err := p.Image(ctx, d)
	return err
}

// engineIsLocal: host directories can only be bind-mounted by an engine on this host.
func (p *Platform) engineIsLocal() bool {
	h := p.engine.DaemonHost()
	return strings.HasPrefix(h, "unix://") || strings.HasPrefix(h, "npipe://")
}

// Provision creates, fills, starts and waits for a container. On error everything it created is
// removed, and the error carries the container's log tail when the server started.
func (p *Platform) Provision(ctx context.Context, r platform.Request) (platform.Box, error) {
	if r.Log == nil {
		r.Log = p.log
	}
	b := &box{p: p, req: r, facts: map[string]string{"platform": "docker"}}
	b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := b.provision(ctx); err != nil {
		return nil, fmt.Errorf("docker %s/%s: %w", r.Storage, r.Network, platform.Undo(ctx, b, err))
	}
	return b, nil
}

// Cleanup removes the containers, volumes and networks labelled with a crashed experiment, then
// the mounts, loop devices and work directories under workRoot that belong to one (the work
// root's first path component is the experiment id, as natively; platform.CleanupWorkRoot).
func (p *Platform) Cleanup(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	return platform.CleanupWith(ctx, p, workRoot, crashed)
}

// CleanupBoxes is Cleanup without its last step, the work root's mounts, loop devices and
// directories (platform.CleanupAll runs that once, after every platform's boxes).
func (p *Platform) CleanupBoxes(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	return p.CleanupLabelled(ctx, crashed, false)
}

// swarmServiceLabel is on every container the engine starts for a swarm service's task.
const swarmServiceLabel = "com.docker.swarm.service.id"

// CleanupLabelled removes the labelled containers, volumes and networks of crashed experiments
// (and stale runtime probes). Swarm's objects — task containers and swarm-scoped networks — only
// with withSwarm: the swarm platform removes their services first, without which a network is
// still in use and a task may be replaced.
func (p *Platform) CleanupLabelled(ctx context.Context, crashed func(string) bool, withSwarm bool) ([]string, error) {
	var done []string
	var errs []error
	f := filters.NewArgs(filters.Arg("label", LabelBoxbench+"=1"))
	cs, err := p.engine.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	errs = append(errs, err)
	for _, c := range cs {
		exp, ok := c.Labels[LabelExperiment]
		if !ok || !(crashed(exp) || staleProbe(c)) || (c.Labels[swarmServiceLabel] != "" && !withSwarm) {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, removeTimeout)
		err := p.Remove(rctx, c.ID)
		cancel()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, fmt.Sprintf("container %s (%s, experiment %s)", strings.Join(c.Names, ","), c.ID[:12], exp))
	}
	vs, err := p.engine.VolumeList(ctx, volume.ListOptions{Filters: f})
	errs = append(errs, err)
	for _, v := range vs.Volumes {
		exp, ok := v.Labels[LabelExperiment]
		if !ok || !crashed(exp) || (v.Labels[LabelPlatform] != "" && !withSwarm) {
			continue
		}
		if err := p.engine.VolumeRemove(ctx, v.Name, true); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		done = append(done, fmt.Sprintf("volume %s (experiment %s)", v.Name, exp))
	}
	ns, err := p.engine.NetworkList(ctx, network.ListOptions{Filters: f})
	errs = append(errs, err)
	for _, n := range ns {
		exp, ok := n.Labels[LabelExperiment]
		if !ok || !crashed(exp) || (n.Scope == "swarm" && !withSwarm) {
			continue
		}
		if err := p.engine.NetworkRemove(ctx, n.ID); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		done = append(done, fmt.Sprintf("network %s (experiment %s)", n.Name, exp))
	}
	return done, errors.Join(errs...)
}

// staleProbe is a runtime probe container older than any live probe can be (a probe removes
// its container within ProbeTimeout; an older one belongs to a process that died).
func staleProbe(c container.Summary) bool {
	return c.Labels[LabelExperiment] == ProbeExperiment && c.Labels[LabelRole] == "probe" &&
		time.Since(time.Unix(c.Created, 0)) > 2*ProbeTimeout+removeTimeout
}

// Labels are the labels of everything one box creates.
func Labels(r platform.Request, role string) map[string]string {
	return map[string]string{LabelBoxbench: "1", LabelExperiment: r.Experiment, LabelRun: r.Run,
		LabelRole: role, image.LabelDBMS: r.DBMS.Name()}
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// ObjectName is a recognisable engine object name: boxbench-<experiment>-<run>-<role>-<random>.
// The random suffix keeps a leftover of a crashed run from blocking a new one.
func ObjectName(r platform.Request, role string) string {
	n := unsafeName.ReplaceAllString("boxbench-"+r.Experiment+"-"+r.Run+"-"+role, "-")
	if len(n) > 100 {
		n = n[:100]
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	return fmt.Sprintf("%s-%x", n, rnd)
}
