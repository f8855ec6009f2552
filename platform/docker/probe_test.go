package docker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestCheck needs the engine for the runtimes it has registered.
func TestCheck(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, tc := range []struct {
		c    platform.Choice
		want string
	}{
		{platform.Choice{Storage: StorageOverlay, Network: NetworkHost}, ""},
		{platform.Choice{Storage: StorageBlock, Network: NetworkDirect, Runtime: "runc"}, ""},
		{platform.Choice{Storage: "nfs", Network: NetworkHost}, `storage "nfs"`},
		{platform.Choice{Storage: StorageBind, Network: "unix"}, `network "unix"`},
		{platform.Choice{Storage: StorageBind, Network: NetworkHost, Runtime: "boxbench-none"}, "not registered"},
	} {
		err := e.p.Check(ctx, tc.c)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%+v) = %v, want %q", tc.c, err, tc.want)
		}
	}
}

// TestDiagnose: the engine answers, the images run the native versions, runc runs.
func TestDiagnose(t *testing.T) {
	e := newEnv(t, databases.Names()...)
	ok := map[string]bool{}
	for _, f := range e.p.Diagnose(context.Background(), databases.DBMSs()) {
		t.Logf("%-20s ok=%-5v %s %s", f.Name, f.OK, f.Detail, f.Fix)
		ok[f.Name] = f.OK
	}
	want := []string{"engine", "runtime runc"}
	for _, n := range databases.Names() {
		d, _ := databases.Get(n)
		if _, err := rootfs.HostVersion(context.Background(), d.ServerPackage()); err == nil {
			want = append(want, "image "+n) // installed natively: the image must match it
		}
	}
	for _, name := range want {
		if !ok[name] {
			t.Errorf("doctor finding %q is not ok", name)
		}
	}
}

// TestProbe starts a real container with every registered runtime. runc must work; any other
// runtime either works or fails with the engine's own words. An unregistered runtime fails with
// the engine's error too. No probe container remains.
func TestProbe(t *testing.T) {
	e := newEnv(t)
	if _, err := e.p.ProbeImage(context.Background()); err != nil {
		testenv.Skip(t, err.Error())
	}
	info, err := e.engine.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"boxbench-none"}
	for n := range info.Runtimes {
		names = append(names, n)
	}
	for _, rt := range names {
		for _, nw := range []string{NetworkHost, NetworkDirect} {
			c := platform.Choice{Runtime: rt, Network: nw}
			start := time.Now()
			err := e.p.Probe(context.Background(), c)
			t.Logf("probe %s/%s (%.1fs): %v", rt, nw, time.Since(start).Seconds(), err)
			switch {
			case rt == "runc" && err != nil:
				t.Errorf("runc does not run: %v", err)
			case err != nil && !strings.Contains(err.Error(), "Error response from daemon") &&
				!strings.Contains(err.Error(), "exited with status") && !strings.Contains(err.Error(), "did not finish"):
				t.Errorf("probe %s: error is not the engine's: %v", rt, err)
			case rt == "boxbench-none" && err == nil:
				t.Errorf("an unregistered runtime ran")
			}
		}
	}
	cs, _ := e.engine.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", LabelRole+"=probe"))})
	if len(cs) > 0 {
		t.Errorf("probe containers left: %d", len(cs))
	}
}
