package check

import (
	"slices"
	"strings"
)

// dbNodes are the database's boxes: f.Nodes for a cluster, else the one server (no name).
func dbNodes(f Facts) []Node {
	if len(f.Nodes) > 0 {
		return f.Nodes
	}
	return []Node{{Source: f.DBSource, Applied: f.Applied}}
}

// perNode runs a check of the database's own telemetry or limits on every node of a cluster
// (each with its source and read-back limits) and merges what they find: one warning per code,
// naming the nodes it concerns ("nodes n1, n3: …" when they say the same, "node n1: …; node
// n3: …" otherwise). A single server is checked as it always was.
func perNode(c func(Facts, Thresholds) []Warning) func(Facts, Thresholds) []Warning {
	return func(f Facts, th Thresholds) []Warning {
		if len(f.Nodes) == 0 {
			return c(f, th)
		}
		type found struct {
			w     Warning
			names []string
			msgs  []string
		}
		var order []string
		byCode := map[string]*found{}
		for _, n := range f.Nodes {
			g := f
			g.DBSource, g.Applied, g.Server, g.Nodes, g.cpusetShare = n.Source, n.Applied, n.Server, nil, true
			for _, w := range c(g, th) {
				x := byCode[w.Code]
				if x == nil {
					x = &found{w: w}
					byCode[w.Code] = x
					order = append(order, w.Code)
				}
				x.names = append(x.names, n.Name)
				x.msgs = append(x.msgs, w.Message)
				if rank(w.Severity) > rank(x.w.Severity) {
					x.w.Severity = w.Severity
				}
			}
		}
		var out []Warning
		for _, code := range order {
			x := byCode[code]
			w := x.w
			if same(x.msgs) {
				w.Message = nodeLabel(x.names) + ": " + x.msgs[0]
			} else {
				parts := make([]string, len(x.msgs))
				for i, m := range x.msgs {
					parts[i] = "node " + x.names[i] + ": " + m
				}
				w.Message = strings.Join(parts, "; ")
			}
			out = append(out, w)
		}
		return out
	}
}

func nodeLabel(names []string) string {
	if len(names) == 1 {
		return "node " + names[0]
	}
	return "nodes " + strings.Join(names, ", ")
}

func same(xs []string) bool {
	for _, x := range xs[1:] {
		if x != xs[0] {
			return false
		}
	}
	return true
}

func rank(s Severity) int {
	return slices.Index([]Severity{SeverityInfo, SeverityWarning, SeverityError}, s)
}

// withinCPUs says whether cpu list a ("0-1") is a non-empty part of cpu list of ("0-3").
func withinCPUs(a, of string) bool {
	sa, err1 := cpuSet(a)
	so, err2 := cpuSet(of)
	if err1 != nil || err2 != nil || len(sa) == 0 {
		return false
	}
	for _, c := range sa {
		if !slices.Contains(so, c) {
			return false
		}
	}
	return true
}
