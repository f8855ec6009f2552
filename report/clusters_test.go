package report

import (
	"strings"
	"testing"

	"github.com/boxbench/boxbench/results"
)

// TestClustersSection: each cell on a Kubernetes cluster lists what its runs recorded of it;
// a fact the runs disagree on shows every value; a cell without cluster facts is left out.
func TestClustersSection(t *testing.T) {
	routes := map[string]string{"kubernetes_cluster": "routes", "kubernetes_cni": "routes", "kubernetes_kube_proxy_mode": "iptables",
		"kubernetes_version": "v1.34.4", "kubernetes_nodes": "bbmulti-ra-1=10.250.1.11 (v1.34.4, containerd://1.6.20)"}
	vxlan := map[string]string{"kubernetes_cluster": "vxlan", "kubernetes_cni": "vxlan", "kubernetes_version": "v1.34.4"}
	changed := map[string]string{"kubernetes_cluster": "vxlan", "kubernetes_cni": "cilium", "kubernetes_version": "v1.34.4"}
	r := &Report{
		Cells: []*Cell{{ID: "platform=kubernetes/cluster=routes"}, {ID: "platform=kubernetes/cluster=vxlan"}, {ID: "platform=native"}},
		Runs: []results.RunRow{
			{CellID: "platform=kubernetes/cluster=routes", Facts: routes},
			{CellID: "platform=kubernetes/cluster=vxlan", Facts: vxlan},
			{CellID: "platform=native", Facts: map[string]string{"ran_on": "this host"}},
			{CellID: "platform=kubernetes/cluster=vxlan", Facts: changed},
			{CellID: "platform=kubernetes/cluster=routes", Facts: routes},
		},
	}
	var b strings.Builder
	writeTextClusters(&b, r)
	got := b.String()
	for _, want := range []string{
		"  platform=kubernetes/cluster=routes\n    cluster    routes\n    CNI        routes\n    kube-proxy iptables\n    Kubernetes v1.34.4\n    nodes      bbmulti-ra-1=10.250.1.11",
		"  platform=kubernetes/cluster=vxlan\n    cluster    vxlan\n    CNI        vxlan | cilium\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("section lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "platform=native") {
		t.Errorf("a cell without a cluster is listed:\n%s", got)
	}
	b.Reset()
	writeTextClusters(&b, &Report{Cells: []*Cell{{ID: "platform=native"}}})
	if b.Len() != 0 {
		t.Errorf("a report without clusters has the section: %q", b.String())
	}
}
