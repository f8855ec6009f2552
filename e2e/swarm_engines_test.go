package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// swarmEngines is scripts/swarm-multi.sh's contract: the manager's socket, node host names.
const (
	swarmEnginesManager = "unix:///run/boxbench/swarm-multi/n1/docker.sock"
	swarmEnginesNodes   = 4
)

// TestSwarmEngines brings up a Swarm of four engines on this host (scripts/swarm-multi.sh, each
// engine in network and mount namespaces of its own), runs a 3-member etcd cluster as Swarm
// services on an attachable overlay network across three of them with the client's container on
// the fourth, and takes the swarm down again on every exit path (unless it was up before the
// test, when it is someone's and stays). Every member must have run on its own node, the client
// on the fourth, the overlay path between engines (VXLAN), and the run must be ok with a
// throughput; no service of the experiment is left on the swarm, and no container on any node.
func TestSwarmEngines(t *testing.T) {
	parallel(t)
	testenv.NeedRoot(t)
	testenv.NeedDocker(t)
	testenv.NeedCommands(t, "etcd", "nsenter", "unshare", "ip", "iptables")
	testenv.Hold(t, "swarm-engines")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "swarm-multi.sh")
	if exec.Command("bash", script, "status").Run() != nil {
		t.Cleanup(func() {
			if out, err := exec.Command("bash", script, "down").CombinedOutput(); err != nil {
				t.Errorf("swarm-multi.sh down: %v\n%s", err, out)
			}
		})
		start := time.Now()
		if out, err := exec.Command("bash", script, "up", "--nodes", "4").CombinedOutput(); err != nil {
			t.Fatalf("swarm-multi.sh up: %v\n%s", err, out)
		}
		t.Logf("a swarm of %d engines up in %s", swarmEnginesNodes, time.Since(start).Round(time.Second))
	}
	s := swarmTopologySpec("swengines", "etcd", 3, "swarm", "overlay", "bind")
	e := newEnv(t, s)
	e.swarmHost = swarmEnginesManager
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, runs := e.okRuns(ctx, t, 1)
	for _, r := range runs {
		f := r.Facts
		membersApart(t, r, func(i int) string { return "swarm node bbswarm-" + string(rune('1'+i)) + " " })
		for _, n := range []string{"n1", "n2", "n3"} {
			if !strings.Contains(f["node_"+n+"_network_path"], "VXLAN between the two engines") {
				t.Errorf("run %s: member %s's path %q", r.ID, n, f["node_"+n+"_network_path"])
			}
		}
		if site := r.Env["client_site"]; !strings.Contains(site, "on swarm node bbswarm-4 ") {
			t.Errorf("run %s: client site %q, want the fourth node", r.ID, site)
		}
		etcdUp(t, r)
	}
	for i := 1; i <= swarmEnginesNodes; i++ {
		host := strings.Replace(swarmEnginesManager, "/n1/", "/n"+string(rune('0'+i))+"/", 1)
		args := []string{"-H", host, "ps", "-aq", "--filter", "label=boxbench.experiment"}
		if i == 1 {
			args = []string{"-H", host, "service", "ls", "-q", "--filter", "label=boxbench.experiment"}
		}
		if out, err := exec.Command("docker", args...).Output(); err != nil || len(strings.Fields(string(out))) > 0 {
			t.Errorf("node %d: docker %s: %v, left: %s", i, strings.Join(args[2:], " "), err, out)
		}
	}
}
