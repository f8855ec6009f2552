package report

import "github.com/boxbench/boxbench/results"

// The cluster fixture: Redis natively and as a Kubernetes pod on the host's network and on the
// pod network of a two-node cluster, whose runs recorded what they saw of the cluster (the
// orchestrator clusters section) and the CPU of each node (the nodes section).

const clusterSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: cluster
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 8, duration: 10s, warmup: 3s}
limits: {cpus: 1, memory: 1GiB}
matrix:
  zip:
    platform: [native, kubernetes, kubernetes]
    network: [host, host, pod]
repetitions: 4
baseline: {platform: native, network: host}
`

func clusterCells() []fixCell {
	mix := map[string]float64{"read": 0.95, "update": 0.05}
	base := map[string]string{"platform": "native", "network": "host"}
	kube := results.Orchestrator{Name: "Kubernetes", Facts: []results.OrchestratorFact{
		{Key: "kube_cluster", Label: "cluster", Value: "boxbench-2n"},
		{Key: "kube_cni", Label: "CNI", Value: "bridge + host-local, routes between nodes"},
		{Key: "kube_proxy", Label: "kube-proxy", Value: "iptables"},
		{Key: "kube_version", Label: "version", Value: "v1.34.4"},
		{Key: "kube_nodes", Label: "nodes", Value: "n1=10.250.1.11 (v1.34.4, containerd 2.1.4, kernel 6.1.0-31-amd64), " +
			"n2=10.250.1.12 (v1.34.4, containerd 2.1.4, kernel 6.1.0-31-amd64)"},
	}}
	p := func(pl, nw string) map[string]string { return map[string]string{"platform": pl, "network": nw} }
	return []fixCell{
		{params: p("native", "host"), baseline: base, thr: 47000, cv: 0.012, mix: mix, reps: 4},
		{params: p("kubernetes", "host"), baseline: base, thr: 46200, cv: 0.015, mix: mix, reps: 4,
			orch: &kube, nodes: map[string]float64{"n1": 0.96, "n2": 0.12}},
		{params: p("kubernetes", "pod"), baseline: base, thr: 39800, cv: 0.018, mix: mix, reps: 4, softirq: 0.18,
			orch: &kube, nodes: map[string]float64{"n1": 0.98, "n2": 0.14}},
	}
}
