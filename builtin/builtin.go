// Package builtin is the one place where boxbench's built-in platforms, databases and workloads
// are listed. Nothing registers itself: adding an implementation means adding it here, and the
// spec vocabulary (platforms, their storages and networks, databases) follows from this list.
package builtin

import (
	"context"
	"fmt"
	"github.com/boxbench/boxbench/cluster"
	"log/slog"
	"sync"

	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/images/vmimage"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
	"github.com/boxbench/boxbench/platform/kubernetes"
	"github.com/boxbench/boxbench/platform/lxc"
	"github.com/boxbench/boxbench/platform/native"
	"github.com/boxbench/boxbench/platform/swarm"
	"github.com/boxbench/boxbench/platform/vm"
	"github.com/boxbench/boxbench/spec"
)

// Baseline is the platform a matrix that varies platform is compared with by default.
const Baseline = native.Name

// Platforms returns every platform of this build by name. Docker is listed whenever a client
// can be made (DOCKER_HOST honoured); an unreachable engine is reported by Check with the
// engine's error.
func Platforms(log *slog.Logger) map[string]platform.Platform {
	engine, err := image.Connect()
	if err != nil {
		return PlatformsOn(nil, log)
	}
	return PlatformsOn(engine, log)
}

// PlatformsOn returns every platform of this build by name, those of a container engine on
// engine (nil: none, and kubernetes takes user-named images only).
func PlatformsOn(engine client.APIClient, log *slog.Logger) map[string]platform.Platform {
	trees := rootfs.NewCache(rootfs.DefaultRoot, log)
	ps := map[string]platform.Platform{native.Name: native.New(), lxc.Name: lxc.New(trees, log),
		vm.Name: vm.New(trees, vmimage.Cache{}, log), vm.NameDocker: vm.NewDocker(trees, vmimage.Cache{}, log)}
	if engine != nil {
		d := docker.New(engine, log)
		ps[docker.Name] = d
		s := swarm.New(d, log)
		s.Trial = redis.Redis{} // the trial's database: small, starts fast, in every build
		ps[swarm.Name] = s
		ps[kubernetes.Name] = kubernetes.New(engine, log) // loads the images Docker's engine holds
	} else {
		ps[kubernetes.Name] = kubernetes.New(nil, log) // user-named images only
	}
	return ps
}

// Configure configures each platform that has a section of its own in the spec
// (platform.Settings: kubernetes's cluster and client pods) with what it decoded from e. Call it
// once the spec is parsed, with the platforms whose Vocabulary e was parsed against: a decoded
// section configures the platform that decoded it.
func Configure(ps map[string]platform.Platform, e *spec.Experiment) {
	for _, p := range ps {
		if s := p.Info().Settings; s != nil {
			if c := e.Sections[s.SectionKey()].Configure; c != nil {
				c()
			}
		}
	}
}

// DBMS returns the named database (a row of Databases).
func DBMS(name string) (dbms.DBMS, error) { return table(Databases()).dbms(name) }

func (t table) dbms(name string) (dbms.DBMS, error) {
	r, err := t.row(name)
	return r.DBMS, err
}

// Vocabulary is what specs may name in this build: every platform's own description, whether
// or not this host can run it (that is the planner's question, answered with reasons).
func Vocabulary(ps map[string]platform.Platform) spec.Vocabulary {
	return defaultSet().Vocabulary(ps)
}

func (t table) vocabulary(ps map[string]platform.Platform) spec.Vocabulary {
	v := spec.Vocabulary{DBMSs: t.names(), Baseline: Baseline, Platforms: map[string]spec.PlatformWords{},
		CPUs: placement.HostCPUs(), Topology: t.checkTopology, Consistencies: t.consistencies(),
		Sections: map[string]spec.SectionDecoder{}}
	for name, p := range ps {
		i := p.Info()
		w := spec.PlatformWords{Storages: i.Storages, Networks: i.Networks, Client: i.Client, StorageParams: i.StorageParams}
		if clu := i.Cluster; clu != nil {
			w.Clusters, w.ClusterRefuses = true, clu.ClusterRefuses()
		}
		if s := i.Settings; s != nil {
			v.Sections[s.SectionKey()] = s.DecodeSection
		}
		v.Platforms[name] = w
	}
	return v
}

// Checker says why the host cannot run a cell. With probe set it also tries runtimes for real
// (once each), which starts short-lived containers; without it nothing is started.
func Checker(ps map[string]platform.Platform, probe bool) plan.Checker {
	return table(Databases()).checker(ps, probe)
}

func (t table) checker(ps map[string]platform.Platform, probe bool) plan.Checker {
	var mu sync.Mutex
	probed := map[string]error{}
	return func(ctx context.Context, c *plan.Cell) error {
		p := ps[c.Platform]
		if p == nil {
			return fmt.Errorf("platform %s is not available in this build", c.Platform)
		}
		d, err := t.dbms(c.DBMS)
		if err != nil {
			return err
		}
		ch := platform.Choice{DBMS: d, Storage: c.Storage, Network: c.Network, Runtime: c.Runtime, Cluster: c.Cluster}
		if c.Cluster != "" && !p.Info().NamedClusters {
			return fmt.Errorf("%s runs on no named cluster (cluster=%s; give it cluster none)", c.Platform, c.Cluster)
		}
		// Needs (a command makes them: an image, a package) do not end the check: the cell is
		// still asked everything else, so that only what no command mends skips it.
		needs, err := prereq.Split(p.Check(ctx, ch))
		if err != nil {
			return err
		}
		if t := c.Topology; t != nil {
			if err := cluster.Check(p, d, c.Network, dbms.Topology{Nodes: t.Nodes, Synchronous: t.Synchronous, ReplicationFactor: t.ReplicationFactor}); err != nil {
				return err
			}
		}
		// A platform's Check gives its own reasons; its description is the safety net.
		if info := p.Info(); !info.Offers(c.Storage, c.Network) {
			return fmt.Errorf("%s offers storage %v and network %v, not storage=%s network=%s",
				c.Platform, info.Storages, info.Networks, c.Storage, c.Network)
		} else if c.Runtime != "" && !info.Runtimes {
			return fmt.Errorf("%s has no OCI runtime (runtime=%s)", c.Platform, c.Runtime)
		}
		if len(needs) > 0 {
			return prereq.Join(needs) // no trial before they are met (a trial runs the image)
		}
		pr := p.Info().Prober
		if !probe || pr == nil || c.Runtime == "" {
			return nil
		}
		key := c.Platform + "/" + c.Runtime
		mu.Lock()
		defer mu.Unlock()
		if err, done := probed[key]; done {
			return err
		}
		err = pr.Probe(ctx, ch)
		probed[key] = err
		return err
	}
}

// checkTopology is the databases' own rule for a spec's topology: the row's, so that a row
// added to the table (builtin.With) is checked by its own database.
func (t table) checkTopology(name string, tp spec.Topology) []string {
	dt := dbms.Topology{Nodes: tp.Nodes, Synchronous: tp.Synchronous, ReplicationFactor: tp.ReplicationFactor, Consistency: tp.Consistency}
	return databases.CheckTopology(t, name, dt)
}

// ForPlan makes the platforms that could run a program while checking a cell refuse to: plan
// never runs one (the kubernetes platform's credential plugins; docs/security.md).
func ForPlan(ps map[string]platform.Platform) {
	for _, p := range ps {
		if c := p.Info().Commands; c != nil {
			c.NoCredentialCommands()
		}
	}
}
