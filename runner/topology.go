package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/boxbench/boxbench/cluster"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/telemetry"
	"github.com/boxbench/boxbench/workload"
)

// provision makes the cell's box: one server, or a cluster of them (package cluster) when
// the cell has a topology. Either is a platform.Box with the same contract.
func (r *Runner) provision(ctx context.Context, p platform.Platform, c *plan.Cell, req platform.Request) (platform.Box, error) {
	if c.Topology == nil {
		return p.Provision(ctx, req)
	}
	t := dbms.Topology{Nodes: c.Topology.Nodes, Synchronous: c.Topology.Synchronous, ReplicationFactor: c.Topology.ReplicationFactor,
		Consistency: r.cfg.Spec.FactsOf(r.cfg.Spec.WorkloadFor(c.Workload, c.Params)).Consistency}
	b, err := cluster.Provision(ctx, p, req, t)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return b, nil
}

// loadInPlace loads the cell's data set into a running cluster before the measured window,
// through the client's endpoint (every member a client of the cluster may use), bounded by
// timeouts.load.
func (r *Runner) loadInPlace(ctx context.Context, box platform.Box, d dbms.DBMS, wl workload.Workload, rec *results.RunRecord) error {
	lctx, cancel := context.WithTimeout(ctx, r.cfg.Spec.Timeouts.Load.D())
	defer cancel()
	cred := d.Client()
	start := time.Now()
	t := workload.Target{DBMS: d.Name(), Endpoint: box.Endpoint(), User: cred.User, Password: cred.Password,
		Database: cred.Database, Box: box, DataDir: box.DataDir(), Log: r.cfg.Log}
	if err := wl.Load(lctx, t); err != nil {
		return fmt.Errorf("load the data set into the cluster: %w", err)
	}
	rec.Facts["restore"] = fmt.Sprintf("loaded in place through the cluster's client endpoint in %s (a seed holds one member's identity)", time.Since(start).Round(time.Millisecond))
	return nil
}

// nodeMetrics are each node's and the whole cluster's resource use over the measured window
// (after the pre-run interval and the warm-up), from the per-node telemetry sources ("db" is
// the first node): node_<name>_cpu_cores (mean cores used), node_<name>_memory_bytes (mean),
// node_<name>_io_write_bytes_per_second, and their sums over the nodes (cluster_…).
func nodeMetrics(box platform.Box, samples []telemetry.Sample, after time.Duration) map[string]float64 {
	nodes := platform.NodesOf(box)
	if nodes == nil {
		return nil
	}
	out := map[string]float64{}
	for _, m := range []struct{ metric, name string }{
		{"cpu_usage_seconds_per_second", "cpu_cores"},
		{"memory_usage_bytes", "memory_bytes"},
		{"io_write_bytes_per_second", "io_write_bytes_per_second"},
	} {
		for i, n := range nodes {
			source := results.NodeSource(i, n.Name)
			var sum float64
			var count int
			for _, s := range samples {
				if s.Source == source && s.Metric == m.metric && s.T > after {
					sum += s.Value
					count++
				}
			}
			if count == 0 {
				continue
			}
			out[results.NodeMetric(n.Name, m.name)] = sum / float64(count)
			out[results.ClusterMetric(m.name)] += sum / float64(count)
		}
	}
	return out
}
