package resource

import (
	"fmt"
	"math"
)

// Differences lists the requested controls whose read-back value differs from the request, in
// words ("memory: requested 536870912 B, applied 1073741824 B"). Unset requests are not
// compared (an unlimited request may read back as the host's capacity); an unpinned request's
// cpuset is not compared either (the group inherits every cpu). Weights and I/O limits are
// compared only when the platform read them back (non-zero in applied): a platform that cannot
// read a control back says so in Applied.How and a warning, not here.
func Differences(requested, applied Limits) []string {
	var d []string
	if requested.CPUs > 0 && math.Abs(requested.CPUs-applied.CPUs) > 0.005 {
		d = append(d, fmt.Sprintf("cpus: requested %g, applied %g", requested.CPUs, applied.CPUs))
	}
	if requested.Cpuset != "" && requested.Cpuset != applied.Cpuset {
		d = append(d, fmt.Sprintf("cpuset: requested %q, applied %q", requested.Cpuset, applied.Cpuset))
	}
	if requested.MemoryBytes > 0 && requested.MemoryBytes != applied.MemoryBytes {
		d = append(d, fmt.Sprintf("memory: requested %d B, applied %d B", requested.MemoryBytes, applied.MemoryBytes))
	}
	for _, c := range []struct {
		name     string
		req, got int64
	}{
		{"cpu_weight", int64(requested.CPUWeight), int64(applied.CPUWeight)},
		{"io_weight", int64(requested.IOWeight), int64(applied.IOWeight)},
		{"read_bps", requested.ReadBps, applied.ReadBps},
		{"write_bps", requested.WriteBps, applied.WriteBps},
		{"read_iops", requested.ReadIOPS, applied.ReadIOPS},
		{"write_iops", requested.WriteIOPS, applied.WriteIOPS},
	} {
		if c.req > 0 && c.got > 0 && c.req != c.got {
			d = append(d, fmt.Sprintf("%s: requested %d, applied %d", c.name, c.req, c.got))
		}
	}
	return d
}
