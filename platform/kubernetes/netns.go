package kubernetes

import (
	"net"

	corev1 "k8s.io/api/core/v1"
)

// A node that is this host (isLocal: the same kernel, so the same cgroups, containerd and
// directories) is not necessarily in this host's network namespace: the multi-node local
// cluster (scripts/kube-multi.sh) runs each node in a namespace of its own on one kernel. A
// hostNetwork pod listens in its node's namespace, whose loopback is not this host's, so it is
// reached at 127.0.0.1 only when the node's address is one of this namespace's.

// inHostNetns says whether node n's network namespace is this process's: its InternalIP (else
// first address) is an address of an interface here. A node without an address counts as
// this namespace when it is this host (the single-node local cluster, as before).
func inHostNetns(n *corev1.Node) bool {
	addr := nodeAddress(n)
	if addr == "" {
		return isLocal(n)
	}
	return isLocal(n) && addressIsOurs(addr, interfaceAddrs)
}

// interfaceAddrs is net.InterfaceAddrs, a variable for tests.
var interfaceAddrs = net.InterfaceAddrs

// addressIsOurs says whether addr is an address of an interface of this network namespace.
func addressIsOurs(addr string, addrs func() ([]net.Addr, error)) bool {
	ip := net.ParseIP(addr)
	if ip == nil {
		return false
	}
	as, err := addrs()
	if err != nil {
		return false
	}
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
