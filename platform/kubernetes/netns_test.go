package kubernetes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A node on this kernel (its boot id) is in this network namespace only when its address is
// one of this namespace's: the multi-node local cluster's nodes (10.250.0.1x in namespaces of
// their own) are not, and a hostNetwork server there is reached at that address, not 127.0.0.1.
func TestInHostNetns(t *testing.T) {
	id := bootID()
	if id == "" {
		t.Fatal("no boot id (/proc/sys/kernel/random/boot_id, which every Linux has)")
	}
	node := func(addr string) *corev1.Node {
		n := &corev1.Node{}
		n.Status.NodeInfo.BootID = id
		if addr != "" {
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}}
		}
		return n
	}
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true},   // an address of this namespace (loopback)
		{"192.0.2.77", false}, // TEST-NET-1: no interface here has it (another namespace's)
		{"", true},            // no address: this host, as before
		{"not-an-ip", false},
	} {
		if got := inHostNetns(node(c.addr)); got != c.want {
			t.Errorf("inHostNetns(node at %q on this kernel) = %v, want %v", c.addr, got, c.want)
		}
	}
	other := node("127.0.0.1")
	other.Status.NodeInfo.BootID = "another-kernel"
	if inHostNetns(other) {
		t.Error("a node of another kernel is in this network namespace")
	}
}
