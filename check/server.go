package check

import "github.com/boxbench/boxbench/dbms"

// Checks on what the database itself reported about the measured window (Facts.Server, the
// run's server_… metrics; dbms.Observer): the database's own rules (Facts.ServerRules), which
// name their metrics and their codes, so that check names no database. Each is skipped when
// its metrics are missing.

// serverRules applies each of the database's rules to the server, or to every node of a
// cluster (perNode: one warning per code, naming the nodes), in the database's order.
func serverRules(f Facts, th Thresholds) []Warning {
	var out []Warning
	for _, r := range f.ServerRules {
		out = append(out, perNode(func(g Facts, _ Thresholds) []Warning {
			fd := r(windowFacts(g))
			if fd == nil {
				return nil
			}
			return []Warning{{Code: fd.Code, Severity: SeverityWarning, Message: fd.Message}}
		})(f, th)...)
	}
	return out
}

// windowFacts are what a database's rule reads of one server's facts.
func windowFacts(f Facts) dbms.WindowFacts {
	w := dbms.WindowFacts{Server: f.Server, Wall: f.Wall}
	for _, o := range f.Ops {
		w.Ops = append(w.Ops, dbms.OpLatency{Op: o.Op, P99: o.P99})
	}
	return w
}
