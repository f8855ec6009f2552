package kubernetes

import (
	"strings"
	"testing"
)

// TestPodClusterPlacement: each member on a node of its own, in name order; the client on the
// first node left over, else beside the last member with a warning; a configured client node
// is kept, with a warning when it holds a member; too few nodes is an error naming them.
func TestPodClusterPlacement(t *testing.T) {
	pc := &podCluster{nodes: []string{"a", "b", "c", "d"}}
	for i, want := range []string{"a", "b", "c"} {
		if got, err := pc.memberNode(i, 3); err != nil || got != want {
			t.Errorf("member %d: %q %v, want %q", i, got, err, want)
		}
	}
	if got, w := pc.clientNode("", 3); got != "d" || w != nil {
		t.Errorf("client of 3 on 4 nodes: %q %v, want d and no warning", got, w)
	}
	if got, w := pc.clientNode("", 4); got != "d" || w == nil || w.Code != "client_shares_node" || !strings.Contains(w.Message, "n4") {
		t.Errorf("client of 4 on 4 nodes: %q %+v, want d beside n4 with a warning", got, w)
	}
	if got, w := pc.clientNode("b", 3); got != "b" || w == nil || !strings.Contains(w.Message, "n2") {
		t.Errorf("configured client node b: %q %+v, want b with a warning naming n2", got, w)
	}
	if got, w := pc.clientNode("x", 3); got != "x" || w != nil {
		t.Errorf("configured client node x: %q %+v", got, w)
	}
	if _, err := pc.memberNode(0, 5); err == nil || !strings.Contains(err.Error(), "a, b, c, d") {
		t.Errorf("5 members on 4 nodes: %v", err)
	}
}

// TestClusterRefuses: the pod network carries a cluster; a Service's virtual IP does not.
func TestClusterRefuses(t *testing.T) {
	r := (&Platform{}).ClusterRefuses()
	if _, ok := r[NetworkPod]; ok {
		t.Errorf("pod refused: %q", r[NetworkPod])
	}
	for _, n := range []string{NetworkService, NetworkNodePort} {
		if r[n] == "" {
			t.Errorf("%s not refused", n)
		}
	}
}
