package swarm

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
)

// TestBridgeGuard: with a running container on a user-defined bridge network (not boxbench's),
// a swarm init is refused, naming the container, its network and the ways out; a single box's
// own network (labelled, containers isolated) is not named; with the spec's acceptance the
// guard lets the init go. On an engine in no swarm, ensure refuses without initialising one.
func TestBridgeGuard(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var d dbms.DBMS = redis.Redis{}
	im, err := e.p.d.Image(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprint(os.Getpid())
	user := e.container(t, im.Ref, "bbguard-user-"+suffix, "bbguard-net-"+suffix, nil, nil)
	single := e.container(t, im.Ref, "bbguard-single-"+suffix, "bbguard-single-net-"+suffix,
		map[string]string{"boxbench": "1"}, map[string]string{"com.docker.network.bridge.enable_icc": "false"})

	e.p.Configure(Section{})
	err = e.p.guardBridges(ctx)
	for _, want := range []string{user + " (network bbguard-net-" + suffix + ")", "moby/moby#45144",
		"acceptBridgeDNSLoss: true", EnvHost} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("guard: %v\nwant an error containing %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), single) {
		t.Errorf("guard names %s, whose network is a single box's own: %v", single, err)
	}
	if !e.wasActive {
		if _, err := e.p.ensure(ctx); err == nil || !strings.Contains(err.Error(), user) {
			t.Errorf("ensure on an engine in no swarm: %v, want the guard's refusal", err)
		}
		if info, err := e.engine.Info(ctx); err != nil || info.Swarm.LocalNodeState != swarm.LocalNodeStateInactive {
			t.Errorf("after the refusal the engine's swarm is %q (%v), want inactive", info.Swarm.LocalNodeState, err)
		}
	}
	e.p.Configure(Section{AcceptBridgeDNSLoss: true})
	if err := e.p.guardBridges(ctx); err != nil {
		t.Errorf("guard with the spec's acceptance: %v", err)
	}
}

// container runs a sleeping container name on a new bridge network net (labels and options
// its own), both removed when the test ends; it returns name.
func (e *env) container(t *testing.T, ref, name, net string, labels, opts map[string]string) string {
	t.Helper()
	ctx := context.Background()
	n, err := e.engine.NetworkCreate(ctx, net, network.CreateOptions{Driver: "bridge", Labels: labels, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.engine.NetworkRemove(context.Background(), n.ID) })
	c, err := e.engine.ContainerCreate(ctx, &container.Config{Image: ref, Entrypoint: []string{"sleep", "600"}},
		&container.HostConfig{NetworkMode: container.NetworkMode(net)}, nil, nil, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.engine.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
	})
	if err := e.engine.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}
