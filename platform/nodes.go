package platform

// NamedBox is one box of a box that is several: a cluster's node under its name.
type NamedBox struct {
	Name string // "n1", "n2", …: a DNS label
	Box  Box
}

// NodesOf returns b's nodes when b is several boxes (Traits.Nodes), and nil for a single box.
func NodesOf(b Box) []NamedBox { return b.Traits().Nodes }

// NodeSource is the telemetry source of node i of a box of several named name: the first node
// is the box's own source (base, "db"), every other "<base>-<name>" ("db-n2").
func NodeSource(base string, i int, name string) string {
	if i == 0 {
		return base
	}
	return base + "-" + name
}
