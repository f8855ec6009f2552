package telemetry

import (
	"context"
	"fmt"
	"time"
)

// Stats is a box's values read from a source other than this host's kernel (a pod on another
// node: its kubelet's summary API). Read returns cumulative counters named "*_total" and gauges
// under the names of a control group's metrics, and the time the source computed them.
//
// Such a source refreshes its values on its own schedule (the kubelet every 10-15 s), usually
// less often than the sampler ticks: a tick whose read carries the same time as the previous
// one adds nothing, and a sample is stamped with the source's time, not the tick's, so rates
// span the source's own intervals. stats_age_seconds says how old the values were when read. A
// read with a zero time (the source has no values for the box yet) adds nothing either.
type Stats struct {
	Via  string
	Read func(ctx context.Context) (map[string]float64, time.Time, error)
}

// statsReadTimeout bounds one read; the tick waits for it.
const statsReadTimeout = 2 * time.Second

// statsMetrics are the names a Stats source may report: those of a control group.
var statsMetrics = map[string]bool{
	"cpu_usage_seconds_total": true, "cpu_user_seconds_total": true, "cpu_system_seconds_total": true,
	"memory_usage_bytes": true, "memory_working_set_bytes": true, "memory_rss_bytes": true,
	"memory_cache_bytes": true, "memory_major_faults_total": true,
}

type statsCollector struct {
	s    *Stats
	last time.Time // the source's time of the previous read used
}

func (c *statsCollector) name() string { return "stats " + c.s.Via }

func (c *statsCollector) collect(r reading) error {
	ctx, cancel := context.WithTimeout(context.Background(), statsReadTimeout)
	defer cancel()
	vs, at, err := c.s.Read(ctx)
	if err != nil {
		return err
	}
	if at.IsZero() || !at.After(c.last) {
		return errNoNewRead
	}
	for k, v := range vs {
		if !statsMetrics[k] {
			return fmt.Errorf("%s: metric %q is not one a stats source may report", c.s.Via, k)
		}
		r.set(k, v)
	}
	c.last = at
	r.set("stats_age_seconds", time.Since(at).Seconds())
	return nil
}

// stampedAt is when the values of the last collect were computed (see Stats).
func (c *statsCollector) stampedAt() time.Time { return c.last }

// stamped is a collector whose values are not of the tick's moment.
type stamped interface{ stampedAt() time.Time }
