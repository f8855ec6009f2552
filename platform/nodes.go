package platform

import (
	"fmt"
	"strings"
)

// NamedBox is one box of a box that is several: a cluster's node under its name.
type NamedBox struct {
	Name string // "n1", "n2", …: a DNS label
	Box  Box
}

// NodesOf returns b's nodes when b is several boxes (Traits.Nodes), and nil for a single box.
func NodesOf(b Box) []NamedBox { return b.Traits().Nodes }

// RefusedNetwork is the error a Clusterer's ClusterNetwork returns for a network it does not
// make: the reason refuses (its ClusterRefuses) gives, else that the network is none of valid,
// the platform's own.
func RefusedNetwork(platform, network string, refuses map[string]string, valid ...string) error {
	why, ok := refuses[network]
	if !ok {
		why = "not a network of this platform (valid: " + strings.Join(valid, ", ") + ")"
	}
	return fmt.Errorf("%s network %s cannot carry a cluster: %s", platform, network, why)
}
