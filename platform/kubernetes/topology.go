package kubernetes

import (
	"context"
	"fmt"

	"github.com/boxbench/boxbench/platform"
)

// A cluster on kubernetes (platform.Clusterer, docs/topology.md) is one bare pod per node, each
// an ordinary box of this platform (its own pod, limits, storage and namespace, made and
// deleted around the run, found by label after a crash). What is built is network host: every
// node's pod on hostNetwork, its server on the loopback address at the ports package cluster
// reserved on this host, so the node must be this host; the peers name each other
// 127.0.0.1:<port>, exactly as native and docker host-mode nodes do, and the client reaches every
// node as it reaches one hostNetwork pod.
//
// The pod network is refused for now (ClusterRefuses): a cluster's members name each other
// before any starts, and a pod's IP is known only once it runs. The usual answer, a headless
// Service whose pods take `hostname: nN` and `subdomain:` (pod DNS), needs cluster DNS, which
// the local cluster of scripts/kube-local.sh does not run (dnsPolicy Default) — so it could not
// be tested here. Service and NodePort put kube-proxy between peers that must reach one member,
// not a load balancer.

// ClusterRefuses: only the host network carries a cluster so far.
func (*Platform) ClusterRefuses() map[string]string {
	pod := "a cluster's members must know each other's names before any starts; on the pod network that needs " +
		"a headless Service and cluster DNS, not built yet (the local cluster runs no DNS): use host"
	return map[string]string{
		NetworkPod:      pod,
		NetworkService:  "a ClusterIP puts kube-proxy's load balancing between peers that must each reach one member; " + pod,
		NetworkNodePort: "a NodePort puts kube-proxy's load balancing between peers that must each reach one member; " + pod,
	}
}

// ClusterNetwork: nodes on hostNetwork share the node's network, nothing to make. Other
// networks are refused with ClusterRefuses' reason.
func (p *Platform) ClusterNetwork(_ context.Context, r platform.Request) (string, func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	if r.Network == NetworkHost {
		return "", none, nil
	}
	why, ok := p.ClusterRefuses()[r.Network]
	if !ok {
		why = "not a network of this platform (valid: host)"
	}
	return "", none, fmt.Errorf("kubernetes network %s cannot carry a cluster: %s", r.Network, why)
}
