package platform

import "testing"

// RefusedNetwork gives the platform's own reason for a network it refuses, and the valid ones
// for a network it does not have.
func TestRefusedNetwork(t *testing.T) {
	refuses := map[string]string{"vip": "a virtual IP stands for a load balancer"}
	for network, want := range map[string]string{
		"vip":  "swarm network vip cannot carry a cluster: a virtual IP stands for a load balancer",
		"pod":  "swarm network pod cannot carry a cluster: not a network of this platform (valid: host, overlay)",
		"host": "swarm network host cannot carry a cluster: not a network of this platform (valid: host, overlay)",
	} {
		if got := RefusedNetwork("swarm", network, refuses, "host", "overlay").Error(); got != want {
			t.Errorf("%s: %q, want %q", network, got, want)
		}
	}
}
