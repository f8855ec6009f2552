package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestTopologyNetns runs a 3-member etcd cluster natively with each member in a network
// namespace of its own on one bridge (network netns: the native baseline of a cluster across
// nodes; the loopback cluster is TestTopology's): the run ok with a throughput, each member at
// its own address on the cluster's bridge, and afterwards no namespace, bridge or FORWARD rule
// of boxbench's left.
func TestTopologyNetns(t *testing.T) {
	parallel(t)
	testenv.NeedCommands(t, "etcd", "ip", "nsenter", "iptables")
	s := topologySpec("netns", "etcd", "{nodes: 3}", "  zip: {platform: [native], network: [netns]}")
	s.Extra = "baseline: {platform: native, network: netns}\n"
	e := newEnv(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, runs := e.okRuns(ctx, t, 1)
	for _, r := range runs {
		membersApart(t, r, func(int) string { return "network namespace bbn" })
		if eps := r.Facts["topology_endpoints"]; strings.Contains(eps, "127.0.0.1") || strings.Count(eps, ":2379") != 3 {
			t.Errorf("run %s: endpoints %q, want each member at its own address", r.ID, eps)
		}
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), "bbn") {
		t.Errorf("network namespaces left: %s", out)
	}
	if out, _ := exec.Command("iptables", "-S", "FORWARD").Output(); strings.Contains(string(out), "boxbench-native-netns") {
		t.Errorf("FORWARD rules left: %s", out)
	}
}
