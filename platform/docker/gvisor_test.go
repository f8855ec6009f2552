package docker

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/boxbench/boxbench/workload"
)

// The gVisor runtimes scripts/setup.sh registers (docs/runtimes.md).
const (
	rtRunsc     = "runsc"      // gVisor's own network stack (netstack)
	rtRunscHost = "runsc-host" // gVisor with the host kernel's network stack
)

// needGVisor skips (fails in CI) unless the engine has both gVisor runtimes registered.
func needGVisor(t *testing.T, e *env) {
	t.Helper()
	info, err := e.engine.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{rtRunsc, rtRunscHost} {
		if r, ok := info.Runtimes[n]; !ok || !strings.HasPrefix(filepath.Base(r.Path), "runsc") {
			testenv.Skip(t, fmt.Sprintf("runtime %s (gVisor) is not registered with the engine: run make setup", n))
		}
	}
}

// TestGVisor runs Redis and PostgreSQL under gVisor: initialised and loaded under runsc with
// netstack on a bridge, captured, then restored under runsc-host on the host network and under
// runsc behind a published port. Each box must answer, run a short workload whose CPU and memory
// the container's cgroup sees (runsc puts the sandbox's processes there), hold the requested
// limits, name the runtime and its version, and carry gVisor's validity warnings.
func TestGVisor(t *testing.T) {
	e := newEnv(t, "redis", "postgresql")
	needGVisor(t, e)
	for _, name := range []string{"redis", "postgresql"} {
		d, _ := databases.Get(name)
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			seed := filepath.Join(e.root, "gvisor-seed-"+name)
			first := e.gvRequest(d, name+"-runsc-init", StorageBind, NetworkDirect, rtRunsc)
			b := provision(ctx, t, e.p, first)
			checkGVisor(ctx, t, b, first)
			use(ctx, t, b, d, "seed")
			checkExec(ctx, t, b)
			if err := b.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if err := b.Capture(ctx, seed); err != nil {
				t.Fatal(err)
			}
			teardown(t, b, first)
			for _, c := range []platform.Choice{
				{Runtime: rtRunscHost, Storage: StorageVolume, Network: NetworkHost},
				{Runtime: rtRunsc, Storage: StorageTmpfs, Network: NetworkPublished},
			} {
				t.Run(c.Runtime+"/"+c.Storage+"/"+c.Network, func(t *testing.T) {
					r := e.gvRequest(d, name+"-"+c.Runtime+"-"+c.Storage, c.Storage, c.Network, c.Runtime)
					r.Seed = &platform.Snapshot{Key: "seed", Dir: seed}
					b := provision(ctx, t, e.p, r)
					defer teardown(t, b, r)
					checkGVisor(ctx, t, b, r)
					use(ctx, t, b, d, c.Runtime+"-"+c.Storage)
				})
			}
		})
	}
}

func (e *env) gvRequest(d dbms.DBMS, run, st, nw, rt string) platform.Request {
	r := e.request(d, run, st, nw)
	r.Runtime = rt
	return r
}

// checkGVisor: limits read back, facts and warnings, and a short workload seen by the cgroup.
func checkGVisor(ctx context.Context, t *testing.T, b platform.Box, r platform.Request) {
	t.Helper()
	f := b.Facts()
	want := map[string]string{"runtime": r.Runtime, "runtime_kind": "gvisor",
		"gvisor_network": map[string]string{rtRunsc: "sandbox", rtRunscHost: "host"}[r.Runtime]}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("fact %s = %q, want %q", k, f[k], v)
		}
	}
	if !strings.HasPrefix(f["runtime_version"], "runsc version ") {
		t.Errorf("fact runtime_version = %q, want runsc's own version line", f["runtime_version"])
	}
	codes := map[string]bool{}
	for _, w := range b.Warnings() {
		codes[w.Code] = true
	}
	for _, c := range []string{"gvisor_kernel", "gvisor_files", map[string]string{rtRunsc: "gvisor_netstack", rtRunscHost: "gvisor_host_network"}[r.Runtime]} {
		if !codes[c] {
			t.Errorf("warning %s missing: %v", c, b.Warnings())
		}
	}
	if d := resource.Differences(r.Resources, b.Applied().Limits); len(d) > 0 {
		t.Errorf("applied limits differ: %v", d)
	}
	ref := b.Observe().Cgroup
	if ref == nil {
		t.Fatal("no cgroup to observe")
	}
	if got, err := ref.ReadLimits(); err != nil || len(resource.Differences(r.Resources, got)) > 0 {
		t.Errorf("cgroup %s holds %+v (%v), want %+v", ref.Path(), got, err, r.Resources)
	}
	if pids, _ := ref.Pids(); !containsPid(pids, f["server_pid"]) || len(pids) < 2 {
		t.Errorf("the sandbox (pid %s) and its gofer are not both in the container's cgroup %s: %v", f["server_pid"], ref.Path(), pids)
	}
	cpu, mem := workloadSeen(ctx, t, b, r.DBMS, *ref, r.Run)
	t.Logf("%s/%s/%s: 300 writes and reads cost the box %.3f s of CPU; memory %.1f MiB", r.Runtime, r.Storage, r.Network, cpu, mem/(1<<20))
	if cpu <= 0 || mem <= 0 {
		t.Errorf("the cgroup did not see the workload: cpu %.4f s, memory %.0f bytes", cpu, mem)
	}
}

// workloadSeen runs 300 writes and reads against the box while sampling its cgroup, and returns
// the CPU seconds and the last memory usage the sampler read.
func workloadSeen(ctx context.Context, t *testing.T, b platform.Box, d dbms.DBMS, ref cgroup.Ref, prefix string) (cpu, mem float64) {
	t.Helper()
	s, err := telemetry.New([]telemetry.Target{{Source: "db", Cgroup: &ref}}, 100*time.Millisecond,
		workload.Clock{Start: time.Now()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := dial(ctx, d, b.Endpoint())
	if err != nil {
		t.Fatalf("connect to %s at %s: %v", d.Name(), b.Endpoint(), err)
	}
	for i := range 300 {
		k := fmt.Sprintf("%s-load-%d", prefix, i)
		if err := c.put(ctx, k, "v"); err != nil {
			t.Fatalf("write %s: %v", k, err)
		}
		if v, err := c.get(ctx, k); err != nil || v != "v" {
			t.Fatalf("read %s: %q %v", k, v, err)
		}
	}
	c.close()
	samples, err := s.Stop()
	if err != nil {
		t.Errorf("telemetry: %v", err)
	}
	var prev time.Duration
	for _, x := range samples {
		switch x.Metric {
		case "cpu_usage_seconds_per_second": // cores in use over the interval ending at T
			cpu += x.Value * (x.T - prev).Seconds()
			prev = x.T
		case "memory_usage_bytes":
			mem = x.Value
		}
	}
	return cpu, mem
}

// TestGVisorCheck: choices gVisor cannot serve are refused before anything starts, with the
// reason and the alternative.
func TestGVisorCheck(t *testing.T) {
	e := newEnv(t)
	needGVisor(t, e)
	ctx := context.Background()
	for _, tc := range []struct {
		c    platform.Choice
		want string
	}{
		{platform.Choice{Storage: StorageBind, Network: NetworkDirect, Runtime: rtRunsc}, ""},
		{platform.Choice{Storage: StorageVolume, Network: NetworkPublished, Runtime: rtRunsc}, ""},
		{platform.Choice{Storage: StorageBind, Network: NetworkHost, Runtime: rtRunscHost}, ""},
		{platform.Choice{Storage: StorageTmpfs, Network: NetworkDirect, Runtime: rtRunscHost}, ""},
		{platform.Choice{Storage: StorageBind, Network: NetworkHost, Runtime: rtRunsc}, "runsc-host"},
		{platform.Choice{Storage: StorageOverlay, Network: NetworkDirect, Runtime: rtRunsc}, "storage overlay"},
	} {
		err := e.p.Check(ctx, tc.c)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%+v) = %v, want %q", tc.c, err, tc.want)
		}
	}
}
