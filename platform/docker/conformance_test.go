package docker

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/platformtest"
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
// what the platform's own lister finds (the engine's containers, networks and volumes labelled
// with it).
func (e *env) leftovers(ctx context.Context, exp string) []string {
	left := platformtest.HostLeftovers(e.root, exp)
	l, err := e.p.Info().Leftovers.Leftovers(ctx, e.root, exp)
	if err != nil {
		l = append(l, "engine: "+err.Error())
	}
	return append(left, l...)
}
