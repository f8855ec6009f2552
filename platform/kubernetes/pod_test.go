package kubernetes

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/platform"
)

// TestLimits: requests = limits exactly as asked (Guaranteed when cpus and memory are both
// set); CPU finer than a millicore is refused rather than rounded.
func TestLimits(t *testing.T) {
	b := &box{req: platform.Request{Resources: resource.Limits{CPUs: 1.5, MemoryBytes: 512 << 20}}, facts: map[string]string{}}
	res, err := b.limits()
	if err != nil {
		t.Fatal(err)
	}
	cpu, mem := res.Limits[corev1.ResourceCPU], res.Limits[corev1.ResourceMemory]
	if cpu.MilliValue() != 1500 || mem.Value() != 512<<20 || !res.Requests[corev1.ResourceCPU].Equal(cpu) || !res.Requests[corev1.ResourceMemory].Equal(mem) {
		t.Errorf("requests %v limits %v", res.Requests, res.Limits)
	}
	if !strings.HasPrefix(b.facts["qos"], "Guaranteed") || len(b.warns) != 0 {
		t.Errorf("qos %q warnings %v", b.facts["qos"], b.warns)
	}
	seed := seedResources(res)
	if c := seed.Limits[corev1.ResourceCPU]; c.MilliValue() != 1500 {
		t.Errorf("seed container cpu %v, want the server's", seed.Limits)
	}

	b = &box{req: platform.Request{Resources: resource.Limits{MemoryBytes: 1 << 30}}, facts: map[string]string{}}
	res, err = b.limits()
	if err != nil || len(b.warns) != 1 || b.warns[0].Code != "qos_not_guaranteed" {
		t.Errorf("memory only: %v %v", err, b.warns)
	}
	if c := seedResources(res).Limits[corev1.ResourceCPU]; !c.Equal(helperCPU) {
		t.Errorf("seed container without a server cpu limit: %v", c)
	}

	b = &box{req: platform.Request{Resources: resource.Limits{CPUs: 0.3333}}, facts: map[string]string{}}
	if _, err := b.limits(); err == nil || !strings.Contains(err.Error(), "millicores") {
		t.Errorf("cpus 0.3333: %v", err)
	}
}
