package kubernetes

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// TestContainerValues: the summary's container stats map onto a control group's metric names
// with the kubelet's time; a pod or container the kubelet has not seen yet gives nothing.
func TestContainerValues(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	at := metav1.NewTime(time.Unix(1_700_000_000, 0))
	s := &statsv1.Summary{Pods: []statsv1.PodStats{
		{PodRef: statsv1.PodReference{Namespace: "ns", Name: "other"}, Containers: []statsv1.ContainerStats{
			{Name: "server", CPU: &statsv1.CPUStats{Time: at, UsageCoreNanoSeconds: u(99e9)}}}},
		{PodRef: statsv1.PodReference{Namespace: "ns", Name: "box"}, Containers: []statsv1.ContainerStats{
			{Name: "keeper", CPU: &statsv1.CPUStats{Time: at, UsageCoreNanoSeconds: u(1e9)}},
			{Name: "server", CPU: &statsv1.CPUStats{Time: at, UsageCoreNanoSeconds: u(2_500_000_000)},
				Memory: &statsv1.MemoryStats{UsageBytes: u(300), WorkingSetBytes: u(200), RSSBytes: u(100)}}}},
	}}
	vs, got := containerValues(s, "ns", "box", "server")
	if !got.Equal(at.Time) {
		t.Fatalf("time %v, want %v", got, at)
	}
	want := map[string]float64{"cpu_usage_seconds_total": 2.5, "memory_usage_bytes": 300, "memory_working_set_bytes": 200, "memory_rss_bytes": 100}
	if len(vs) != len(want) {
		t.Errorf("values %v, want %v", vs, want)
	}
	for k, v := range want {
		if vs[k] != v {
			t.Errorf("%s = %g, want %g", k, vs[k], v)
		}
	}
	if vs, got := containerValues(s, "ns", "absent", "server"); vs != nil || !got.IsZero() {
		t.Errorf("a pod the kubelet has not seen: %v %v", vs, got)
	}
}
