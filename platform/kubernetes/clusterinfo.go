package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/version"

	"github.com/boxbench/boxbench/platform"
)

// serverVersion asks the API server its version within 10 s (client-go's ServerVersion takes
// no context, and the rest config has no timeout: requests are bounded by their contexts).
func serverVersion(ctx context.Context, cl *cluster) (*version.Info, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := cl.cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("the API server at %s did not answer within 10 s: %w", cl.rest.Host, err)
		}
		return nil, err
	}
	var v version.Info
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("the API server's /version: %w", err)
	}
	return &v, nil
}

// Node annotations that say what the API does not: the pod network (CNI) and kube-proxy's mode.
// scripts/kube-multi.sh sets both; flannel sets its own backend annotation on every node.
const (
	AnnotationCNI       = "boxbench/cni"
	AnnotationProxyMode = "boxbench/kube-proxy-mode"
	annotationFlannel   = "flannel.alpha.coreos.com/backend-type"
)

// clusterFacts describes the cluster a box ran on, for people (docs/kubernetes.md): its API
// server's version, every node with its address and kubelet, and what the node's annotations
// say of its CNI and kube-proxy mode ("not recorded" where nothing does). A fact that cannot be
// read says why instead.
func clusterFacts(ctx context.Context, cl *cluster, n *corev1.Node) map[string]string {
	f := map[string]string{"kubernetes_cni": cni(n), "kubernetes_kube_proxy_mode": annotated(n, AnnotationProxyMode)}
	if v, err := serverVersion(ctx, cl); err == nil {
		f["kubernetes_version"] = v.GitVersion
	} else {
		f["kubernetes_version"] = "not read: " + err.Error()
	}
	l, err := cl.cs.CoreV1().Nodes().List(ctx, listAll)
	if err != nil {
		f["kubernetes_nodes"] = "not read: " + err.Error()
		return f
	}
	var nodes []string
	for i := range l.Items {
		m := &l.Items[i]
		nodes = append(nodes, m.Name+"="+nodeAddress(m)+" ("+m.Status.NodeInfo.KubeletVersion+", "+m.Status.NodeInfo.ContainerRuntimeVersion+")")
	}
	sort.Strings(nodes)
	f["kubernetes_nodes"] = strings.Join(nodes, " ")
	return f
}

// orchestratorFacts are the facts of its cluster a box lists in its Traits (the cluster's
// name, which provision sets, and clusterFacts' ones), in the order the report shows them,
// with their labels there.
var orchestratorFacts = []struct{ key, label string }{
	{"kubernetes_cluster", "cluster"},
	{"kubernetes_cni", "CNI"},
	{"kubernetes_kube_proxy_mode", "kube-proxy"},
	{"kubernetes_version", "Kubernetes"},
	{"kubernetes_nodes", "nodes"},
}

// orchestrator is what a box with these facts records of its cluster (platform.Traits): every
// fact of orchestratorFacts, "" where the box has none (an unnamed cluster).
func orchestrator(facts map[string]string) *platform.Orchestrator {
	o := &platform.Orchestrator{Name: "Kubernetes"}
	for _, f := range orchestratorFacts {
		o.Facts = append(o.Facts, platform.OrchestratorFact{Key: f.key, Label: f.label, Value: facts[f.key]})
	}
	return o
}

// cni is what node n's annotations say of its pod network.
func cni(n *corev1.Node) string {
	if v := n.Annotations[AnnotationCNI]; v != "" {
		return v
	}
	if v := n.Annotations[annotationFlannel]; v != "" {
		return "flannel (" + v + ")"
	}
	return "not recorded (no " + AnnotationCNI + " annotation on node " + n.Name + ")"
}

func annotated(n *corev1.Node, key string) string {
	if v := n.Annotations[key]; v != "" {
		return v
	}
	return "not recorded (no " + key + " annotation on node " + n.Name + ")"
}
