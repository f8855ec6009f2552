package docker

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/platformtest"
)

// TestConformance runs the platform suite on the Docker platform with Redis.
func TestConformance(t *testing.T) {
	e := newEnv(t, "redis")
	var d dbms.DBMS = redis.Redis{}
	platformtest.Run(t, platformtest.Config{
		Platform: e.p, DBMS: d, WorkRoot: e.root, Experiment: fmt.Sprintf("pt-docker-%d", os.Getpid()),
		Choices: []platform.Choice{{Storage: StorageBind, Network: NetworkHost}, {Storage: StorageOverlay, Network: NetworkDirect},
			{Storage: StorageVolume, Network: NetworkPublished}},
		Resources:   resource.Limits{CPUs: 1, Cpuset: "1", MemoryBytes: 512 << 20, CPUWeight: 200, WriteBps: 64 << 20},
		StorageOpts: sizes,
		Leftovers:   e.leftovers,
	})
}

// TestConformanceGVisor runs the platform suite with gVisor: netstack on a bridge, and the host
// network stack on the host network.
func TestConformanceGVisor(t *testing.T) {
	e := newEnv(t, "redis")
	needGVisor(t, e)
	var d dbms.DBMS = redis.Redis{}
	platformtest.Run(t, platformtest.Config{
		Platform: e.p, DBMS: d, WorkRoot: e.root, Experiment: fmt.Sprintf("pt-gvisor-%d", os.Getpid()),
		Choices: []platform.Choice{{Runtime: rtRunsc, Storage: StorageBind, Network: NetworkDirect},
			{Runtime: rtRunscHost, Storage: StorageVolume, Network: NetworkHost},
			{Runtime: rtRunsc, Storage: StorageTmpfs, Network: NetworkPublished}},
		Resources:   resource.Limits{CPUs: 1, Cpuset: "1", MemoryBytes: 512 << 20, CPUWeight: 200, WriteBps: 64 << 20},
		StorageOpts: sizes,
		Leftovers:   e.leftovers,
	})
}

// leftovers lists what of experiment exp remains: host directories, mounts, loop devices, and
// the engine's containers, networks and volumes labelled with it.
func (e *env) leftovers(ctx context.Context, exp string) []string {
	left := platformtest.HostLeftovers(e.root, exp)
	f := filters.NewArgs(filters.Arg("label", LabelExperiment+"="+exp))
	cs, err := e.engine.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	for _, c := range cs {
		left = append(left, "container "+c.Names[0])
	}
	ns, err3 := e.engine.NetworkList(ctx, network.ListOptions{Filters: f})
	for _, n := range ns {
		left = append(left, "network "+n.Name)
	}
	vs, err2 := e.engine.VolumeList(ctx, volume.ListOptions{Filters: f})
	for _, v := range vs.Volumes {
		left = append(left, "volume "+v.Name)
	}
	if err != nil || err2 != nil || err3 != nil {
		left = append(left, fmt.Sprintf("engine: %v %v %v", err, err2, err3))
	}
	return left
}
