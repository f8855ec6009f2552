package platform

// NamedBox is one box of a box that is several: a cluster's node under its name.
type NamedBox struct {
	Name string // "n1", "n2", …: a DNS label
	Box  Box
}

// Multi is implemented by a box that is several boxes (a cluster of nodes, each an ordinary
// box of its platform: a process, a container, a swarm service, a pod). Telemetry samples each
// node through its own Observe (a host cgroup or the orchestrator's stats, platform.StatsView),
// and the run's validity checks look at every node; the first node stands for the box where a
// box has one answer (Box.Observe, Box.Applied).
//
// Contract: Nodes is fixed after Provision, cheap, and returns every node in order (the first
// first), each a running Box; callers must not tear a node down (the multi-box's Teardown
// does).
type Multi interface {
	Nodes() []NamedBox
}

// NodesOf returns b's nodes when b is several boxes, and nil for a single box.
func NodesOf(b Box) []NamedBox {
	if m, ok := b.(Multi); ok {
		return m.Nodes()
	}
	return nil
}
