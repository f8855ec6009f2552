package docker

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
)

// TestOwnNetwork: a box on bridge-direct or bridge-published is on a bridge network of its own,
// labelled with its experiment and run: a container on the engine's default bridge (docker0)
// cannot connect to the server's address, while a client in the host's namespace can (the
// control that shows the probe works); Teardown removes the network.
func TestOwnNetwork(t *testing.T) {
	e := newEnv(t, "redis")
	var d dbms.DBMS = redis.Redis{}
	im, err := e.p.Image(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	for _, nw := range []string{NetworkDirect, NetworkPublished} {
		t.Run(nw, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			r := e.request(d, "net-"+nw, StorageOverlay, nw)
			b := provision(ctx, t, e.p, r)
			defer teardown(t, b, r)
			facts := b.Facts()
			ins, err := e.engine.ContainerInspect(ctx, facts["container_id"])
			if err != nil {
				t.Fatal(err)
			}
			var ip string
			for name, ep := range ins.NetworkSettings.Networks {
				if name != facts["network_name"] {
					t.Errorf("the server container is on network %s, want only its own %s", name, facts["network_name"])
				}
				ip = ep.IPAddress
			}
			n, err := e.engine.NetworkInspect(ctx, facts["network_name"], network.InspectOptions{})
			if err != nil {
				t.Fatalf("the box's network %q: %v", facts["network_name"], err)
			}
			if n.Labels[LabelExperiment] != e.exp || n.Labels[LabelRun] != r.Run || n.Driver != "bridge" {
				t.Errorf("network %s: driver %s labels %v", n.Name, n.Driver, n.Labels)
			}
			port := strconv.Itoa(d.DefaultPort())
			if got := tcpProbe(ctx, t, im.ID, "host", ip, port); got != "open" {
				t.Fatalf("from the host's namespace %s:%s is %q, want open (the probe does not work)", ip, port, got)
			}
			if got := tcpProbe(ctx, t, im.ID, "bridge", ip, port); got == "open" {
				t.Errorf("a container on the default bridge reaches the server at %s:%s", ip, port)
			}
			if err := b.Teardown(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := e.engine.NetworkInspect(ctx, n.ID, network.InspectOptions{}); err == nil {
				t.Errorf("network %s left after teardown", n.Name)
			}
		})
	}
}

// tcpProbe runs a throwaway container of image on network mode and says whether it can open a
// TCP connection to ip:port within 3 s ("open", or what failed).
func tcpProbe(ctx context.Context, t *testing.T, image, mode, ip, port string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "docker", "run", "--rm", "--network", mode, "--label", "boxbench.test=probe",
		image, "timeout", "3", "bash", "-c", "exec 3<>/dev/tcp/"+ip+"/"+port+" && echo open").CombinedOutput()
	s := strings.TrimSpace(string(out))
	if err != nil {
		return "closed: " + err.Error() + ": " + s
	}
	return s
}
