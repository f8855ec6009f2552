package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	statsv1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/boxbench/boxbench/platform"
)

// Telemetry values of Config.Telemetry (the spec's kubernetes.telemetry).
const (
	TelemetryAuto    = "auto"    // the container's cgroup when the node is this host, else the kubelet's summary API
	TelemetrySummary = "summary" // the kubelet's summary API on every node
)

// Telemetries lists them.
var Telemetries = []string{TelemetryAuto, TelemetrySummary}

// summaryStats reads the server container's CPU and memory from its node's kubelet summary
// API, through the API server's node proxy (RBAC: get on nodes/proxy). The kubelet refreshes
// them every 10-15 s; a read before it has seen the container returns no values and no error.
func (b *box) summaryStats() *platform.StatsView {
	node, ns, pod := b.node.Name, b.ns, b.name
	return &platform.StatsView{
		Via: "kubelet summary API of node " + node + " (container " + ctrServer + ")",
		Read: func(ctx context.Context) (map[string]float64, time.Time, error) {
			raw, err := b.cl.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "stats", "summary").
				Param("only_cpu_and_memory", "true").DoRaw(ctx)
			if err != nil {
				return nil, time.Time{}, fmt.Errorf("kubelet summary of node %s: %w", node, err)
			}
			var s statsv1.Summary
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, time.Time{}, fmt.Errorf("kubelet summary of node %s: %w", node, err)
			}
			vs, at := containerValues(&s, ns, pod, ctrServer)
			return vs, at, nil
		},
	}
}

// containerValues are container c of pod ns/name in summary s under the names of a control
// group's metrics, and the time of its CPU values. Absent (not yet seen by the kubelet): no
// values, a zero time.
func containerValues(s *statsv1.Summary, ns, name, c string) (map[string]float64, time.Time) {
	for _, p := range s.Pods {
		if p.PodRef.Namespace != ns || p.PodRef.Name != name {
			continue
		}
		for _, cs := range p.Containers {
			if cs.Name != c || cs.CPU == nil || cs.CPU.UsageCoreNanoSeconds == nil {
				continue
			}
			vs := map[string]float64{"cpu_usage_seconds_total": float64(*cs.CPU.UsageCoreNanoSeconds) / 1e9}
			if m := cs.Memory; m != nil {
				for k, v := range map[string]*uint64{"memory_usage_bytes": m.UsageBytes, "memory_working_set_bytes": m.WorkingSetBytes,
					"memory_rss_bytes": m.RSSBytes, "memory_major_faults_total": m.MajorPageFaults} {
					if v != nil {
						vs[k] = float64(*v)
					}
				}
			}
			return vs, cs.CPU.Time.Time
		}
	}
	return nil, time.Time{}
}
