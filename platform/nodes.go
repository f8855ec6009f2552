package platform

// NamedBox is one box of a box that is several: a cluster's node under its name.
type NamedBox struct {
	Name string // "n1", "n2", …: a DNS label
	Box  Box
}

// NodesOf returns b's nodes when b is several boxes (Traits.Nodes), and nil for a single box.
func NodesOf(b Box) []NamedBox { return b.Traits().Nodes }
