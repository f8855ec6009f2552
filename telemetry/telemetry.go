// Package telemetry samples, on the run's monotonic clock, what the database's control group,
// the client process and the host did while a workload ran, so that latency intervals and
// resource use line up on one time axis.
//
// # Samples and names
//
// A Sample is one value of one metric of one source at the end of one interval. Metric names
// carry their unit and say how a counter was turned into a value:
//
//   - "<what>_<unit>": a gauge read at the sample time (memory_usage_bytes, load1).
//   - "<what>_<unit>_per_second": a kernel counter's increase over the interval divided by the
//     interval's length (cpu_usage_seconds_per_second is cores in use; pressure_*_seconds_per_second
//     is the share of time stalled, 0..1; disk_io_time_seconds_per_second is utilisation, 0..1).
//   - "<what>_per_interval": the increase of a discrete event counter over the interval (CFS
//     periods, throttled periods, memory limit hits, OOM kills), so that sums over a window are
//     exact. The interval is the time since the previous sample of the same series.
//
// Snapshot values and the collectors' raw readings use "<what>_<unit>_total" for a cumulative
// counter (as Prometheus does) and the gauge names above.
//
// A value the kernel does not offer (no PSI, a v1 file missing, a controller not enabled, block
// I/O accounting not active) is absent: no Sample is emitted. A zero is always a measured zero.
// The full list with units and sources is in metrics.go.
package telemetry

import (
	"fmt"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/cgroup"
)

// Sample is one value of one metric.
type Sample struct {
	// T is the end of the interval (when the value was read), as an offset from Clock.Start.
	T time.Duration `json:"t_ns"`
	// Source is whose value this is: the Target's Source ("db", "client", "host", or a
	// neighbour's name).
	Source string `json:"source"`
	// Metric is the metric's name, unit included; see the package documentation.
	Metric string `json:"metric"`
	// Label names the block device or network interface a per-device metric is about
	// ("vda", "eth0"); empty for all other metrics.
	Label string  `json:"label,omitempty"`
	Value float64 `json:"value"`
}

// Target is one thing to sample. Any subset of the fields after Source may be set; each set
// field adds its collectors under the same Source.
type Target struct {
	// Source names the samples ("db", "client", "host", or a neighbour's name). Unique per
	// Sampler.
	Source string
	// Cgroup adds the control group's CPU, throttling, memory, block I/O and pressure.
	Cgroup *cgroup.Ref
	// PID adds the process's CPU time, context switches and resident memory.
	PID int
	// Parts adds the CPU time of the box's machinery, by component (Part).
	Parts []Part
	// Host adds host-wide CPU by mode, memory, swap, load average, pressure, and network
	// traffic of every interface (or only of Interfaces when that is set).
	Host bool
	// DataDir adds the I/O of the block device holding this directory (through overlay mounts
	// and loop devices; for a loop device the backing device too).
	DataDir string
	// Interfaces restricts network metrics to these interfaces; set without Host it adds
	// network metrics for just these.
	Interfaces []string
	// Guest adds the server's control group inside a VM guest, read through Guest's channel.
	Guest *Guest
	// GuestSystem adds the whole guest's CPU by mode, memory, load, pressure and disks.
	GuestSystem *Guest
	// Stats adds the box's CPU and memory as a source other than this host reports them.
	Stats *Stats
	// Missing says what of this source cannot be observed and why (a box that is not a group on
	// this host, a data directory the host cannot see). It is not sampled; Sampler.Missing
	// reports it, so the run records the gap instead of silently lacking the values.
	Missing []string
}

func (t Target) validate() error {
	var p []string
	if t.Source == "" {
		p = append(p, "empty source")
	}
	if t.Cgroup == nil && t.PID == 0 && len(t.Parts) == 0 && !t.Host && t.DataDir == "" && len(t.Interfaces) == 0 && len(t.Missing) == 0 &&
		t.Guest == nil && t.GuestSystem == nil && t.Stats == nil {
		p = append(p, "nothing to sample (set Cgroup, PID, Parts, Host, DataDir, Interfaces, Guest, GuestSystem or Stats)")
	}
	if t.Stats != nil && (t.Stats.Read == nil || strings.TrimSpace(t.Stats.Via) == "") {
		p = append(p, "stats source without a name or a reader")
	}
	if t.PID < 0 {
		p = append(p, fmt.Sprintf("negative pid %d", t.PID))
	}
	if t.Cgroup != nil && !t.Cgroup.Valid() {
		p = append(p, fmt.Sprintf("cgroup %q has unknown version %d", t.Cgroup.Path(), int(t.Cgroup.Layout())))
	}
	if len(p) == 0 {
		return nil
	}
	return fmt.Errorf("target %q: %s", t.Source, strings.Join(p, "; "))
}

// key identifies one series within a reading.
type key struct {
	metric string
	label  string
}

// reading is what a collector read at one moment: cumulative counters (named "*_total") and
// gauges. Missing keys are values the kernel did not offer.
type reading map[key]float64

func (r reading) set(metric string, v float64)             { r[key{metric: metric}] = v }
func (r reading) setLabel(metric, label string, v float64) { r[key{metric, label}] = v }

// perInterval lists the counters (by their "_total" name without the suffix) that are
// discrete events and become per-interval increases rather than rates.
var perInterval = map[string]bool{
	"cpu_periods":           true,
	"cpu_throttled_periods": true,
	"memory_limit_hits":     true,
	"memory_oom_kills":      true,
}

// derive turns two readings of one collector into samples at the time of cur. Counters present
// in both become rates or per-interval increases; a counter that went backwards (the group was
// recreated, a counter wrapped) gives no sample. Gauges are taken from cur.
func derive(source string, prev reading, prevT time.Duration, cur reading, curT time.Duration) []Sample {
	out := make([]Sample, 0, len(cur))
	dt := (curT - prevT).Seconds()
	for k, v := range cur {
		base, counter := strings.CutSuffix(k.metric, "_total")
		if !counter {
			out = append(out, Sample{T: curT, Source: source, Metric: k.metric, Label: k.label, Value: v})
			continue
		}
		if prev == nil || dt <= 0 {
			continue
		}
		p, ok := prev[k]
		if !ok || v < p {
			continue
		}
		s := Sample{T: curT, Source: source, Label: k.label}
		if perInterval[base] {
			s.Metric, s.Value = base+"_per_interval", v-p
		} else {
			s.Metric, s.Value = base+"_per_second", (v-p)/dt
		}
		out = append(out, s)
	}
	return out
}
