package kubernetes

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/internal/flock"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/platformtest"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// needCluster returns the platform over the local cluster of scripts/kube-local.sh (its
// contract kubeconfig), with the Docker engine the built images are in.
func needCluster(t *testing.T, dbName string) *Platform {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "ctr")
	testenv.Await(t, testenv.LocalCluster)
	if _, err := os.Stat(ContractKubeconfig); err != nil {
		testenv.Skip(t, "no local cluster (scripts/kube-local.sh up): "+err.Error())
	}
	// One test process's experiments on the cluster at a time: a node of 2 cpus cannot
	// schedule this suite's pods and e2e's at once (e2e.TestKubernetes holds the same lock).
	unlock, err := flock.Lock(context.Background(), "/var/lib/boxbench/kube-test.lock", func() {
		t.Log("waiting for another test process's Kubernetes tests")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	engine, err := image.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	p := New(engine, nil)
	p.Configure(Config{Kubeconfig: ContractKubeconfig, AgentBinary: os.Getenv("BOXBENCH_BIN")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, _ := databases.Get(dbName)
	if err := p.Check(ctx, platform.Choice{DBMS: d, Storage: StorageHostPath, Network: NetworkHost}); err != nil {
		testenv.Skip(t, err.Error()+" (scripts/kube-local.sh up; make images)")
	}
	return p
}

// clusterLeftovers lists what platformtest finds on the host and what the platform's own
// lister finds in the cluster (the objects of experiment exp).
func clusterLeftovers(p *Platform, root string) func(ctx context.Context, exp string) []string {
	return func(ctx context.Context, exp string) []string {
		left := platformtest.HostLeftovers(root, exp)
		objects, err := p.Info().Leftovers.Leftovers(ctx, root, exp)
		if err != nil {
			objects = append(objects, "cluster: "+err.Error())
		}
		return append(left, objects...)
	}
}

// TestConformance runs the platform suite on the local cluster with Redis, over every storage
// a local node offers and every network.
func TestConformance(t *testing.T) {
	p := needCluster(t, "redis")
	var d dbms.DBMS = redis.Redis{}
	root := testenv.WorkRoot(t)
	platformtest.Run(t, platformtest.Config{
		Platform: p, DBMS: d, WorkRoot: root, Experiment: fmt.Sprintf("pt-kubernetes-%d", os.Getpid()),
		Choices: []platform.Choice{{Storage: StorageHostPath, Network: NetworkHost}, {Storage: StorageEmptyDir, Network: NetworkPod},
			{Storage: StorageLocalPV, Network: NetworkService}, {Storage: StorageTmpfs, Network: NetworkNodePort}},
		// Half a core: the suite runs two boxes at once on a 2-core node.
		Resources:   resource.Limits{CPUs: 0.5, Cpuset: "1", MemoryBytes: 512 << 20, CPUWeight: 200},
		StorageOpts: platform.StorageOptions{TmpfsSize: 256 << 20},
		Leftovers:   clusterLeftovers(p, root),
	})
}

// TestCheckNamesKubeconfig: with no reachable cluster, Check's reason names the kubeconfig used.
func TestCheckNamesKubeconfig(t *testing.T) {
	p := New(nil, nil)
	missing := t.TempDir() + "/absent.kubeconfig"
	p.Configure(Config{Kubeconfig: missing})
	err := p.Check(context.Background(), platform.Choice{Storage: StorageEmptyDir, Network: NetworkPod})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("want a reason naming %s, got %v", missing, err)
	}
}

// TestSnapshotThroughAPI: the data of a volume the host cannot see (an emptyDir) survives Stop,
// a Capture streamed out of the keeper container and a seed streamed into a new box's seed
// container (platformtest's snapshot step covers the host-directory path).
func TestSnapshotThroughAPI(t *testing.T) {
	p := needCluster(t, "redis")
	var d dbms.DBMS = redis.Redis{}
	root := testenv.WorkRoot(t)
	exp := fmt.Sprintf("kube-snap-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	req := func(run string) platform.Request {
		return platform.Request{Experiment: exp, Run: run, WorkDir: root + "/" + exp + "/" + run, DBMS: d,
			Choice: platform.Choice{Storage: StorageEmptyDir, Network: NetworkPod}, Resources: resource.Limits{CPUs: 0.5, MemoryBytes: 256 << 20}}
	}
	t.Cleanup(func() {
		_, _ = p.Cleanup(context.Background(), root, func(e string) bool { return e == exp })
		if left := clusterLeftovers(p, root)(context.Background(), exp); len(left) > 0 {
			t.Errorf("left: %v", left)
		}
	})
	b, err := p.Provision(ctx, req("r1"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Teardown(context.Background())
	want := "through the API " + exp
	if _, err := b.Exec(ctx, []string{"sh", "-c", `printf %s "$1" > marker && mkdir -p sub && printf x > sub/f`, "sh", want}); err != nil {
		t.Fatal(err)
	}
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	dst := root + "/captured"
	if err := b.Capture(ctx, dst); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(dst + "/marker"); err != nil || string(got) != want {
		t.Fatalf("captured marker %q %v", got, err)
	}
	if err := b.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	r := req("r2")
	r.Seed = &platform.Snapshot{Key: "test", Dir: dst}
	b2, err := p.Provision(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Teardown(context.Background())
	if b2.Facts()["restore"] != "tar stream through the API (exec into the seed init container)" {
		t.Errorf("restore fact %q", b2.Facts()["restore"])
	}
	got, err := b2.Exec(ctx, []string{"sh", "-c", `cat marker sub/f; stat -c %U marker`})
	if err != nil || string(got) != want+"x"+"redis\n" {
		t.Errorf("restored %q %v", got, err)
	}
}
