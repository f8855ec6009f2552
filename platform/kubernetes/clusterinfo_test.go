package kubernetes

import (
	"testing"

	"github.com/boxbench/boxbench/platform"
)

// TestOrchestrator: a box's Traits list every cluster fact it also records, in the report's
// order with the report's labels; an unnamed cluster's name is "" (the report leaves it out).
func TestOrchestrator(t *testing.T) {
	facts := map[string]string{"kubernetes_cni": "routes", "kubernetes_kube_proxy_mode": "iptables",
		"kubernetes_version": "v1.34.4", "kubernetes_nodes": "n1=10.0.0.1 (v1.34.4, containerd://1.6.20)", "node": "n1"}
	o := orchestrator(facts)
	want := []platform.OrchestratorFact{
		{Key: "kubernetes_cluster", Label: "cluster"},
		{Key: "kubernetes_cni", Label: "CNI", Value: "routes"},
		{Key: "kubernetes_kube_proxy_mode", Label: "kube-proxy", Value: "iptables"},
		{Key: "kubernetes_version", Label: "Kubernetes", Value: "v1.34.4"},
		{Key: "kubernetes_nodes", Label: "nodes", Value: "n1=10.0.0.1 (v1.34.4, containerd://1.6.20)"},
	}
	if o.Name != "Kubernetes" || len(o.Facts) != len(want) {
		t.Fatalf("orchestrator = %+v, want Kubernetes with %+v", o, want)
	}
	for i, f := range o.Facts {
		if f != want[i] {
			t.Errorf("fact %d = %+v, want %+v", i, f, want[i])
		}
		if f.Value != facts[f.Key] {
			t.Errorf("fact %s = %q, but the box's fact is %q", f.Key, f.Value, facts[f.Key])
		}
	}
}
