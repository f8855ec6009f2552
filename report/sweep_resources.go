package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/stats"
)

// What a sweep point's telemetry says about its resources (docs/report.md, "Resources").

type resourceShare struct {
	name, capacity string
	share          float64
}

// runResources averages the telemetry samples of the measured window (a sample at T covers
// the interval that ends at T) and turns each resource's use into a share of its capacity.
// The experiment's typed env values stand in for what the run did not record: the host's CPU
// count without a "host cpus" series, placement.client's pin for a run without its own.
func runResources(pts []results.Point, from, to time.Duration, run results.RunRow, exp results.Experiment) []resourceShare {
	// Per-device values (disks) are kept apart: the busiest device counts.
	type key struct{ source, metric string }
	sums := map[key]map[time.Duration]float64{}
	for _, p := range pts {
		if p.T <= from || p.T > to+time.Second/2 {
			continue
		}
		k := key{p.Source, p.Metric}
		if sums[k] == nil {
			sums[k] = map[time.Duration]float64{}
		}
		if p.Metric == "disk_io_time_seconds_per_second" {
			sums[k][p.T] = math.Max(sums[k][p.T], p.Value)
		} else {
			sums[k][p.T] += p.Value
		}
	}
	mean := func(source, metric string) (float64, bool) {
		m := sums[key{source, metric}]
		if len(m) == 0 {
			return 0, false
		}
		var s float64
		for _, t := range slices.Sorted(maps.Keys(m)) { // in time order: the sum is deterministic
			s += m[t]
		}
		return s / float64(len(m)), true
	}
	// A cluster's nodes (docs/topology.md): "db" is the first, "db-n2"… the others, each with
	// the same limits. The busiest node's share is the server's; the host's other CPU is what
	// no node and no client used.
	dbSources := []string{results.SourceDB}
	for k := range sums {
		if results.IsNodeSource(k.source) && !slices.Contains(dbSources, k.source) {
			dbSources = append(dbSources, k.source)
		}
	}
	slices.Sort(dbSources[1:])
	busiest := func(metric string) (float64, bool) {
		var best float64
		var found bool
		for _, src := range dbSources {
			if v, ok := mean(src, metric); ok {
				best, found = math.Max(best, v), true
			}
		}
		return best, found
	}
	allNodes := func(metric string) float64 {
		var t float64
		for _, src := range dbSources {
			v, _ := mean(src, metric)
			t += v
		}
		return t
	}
	hostCPUs, _ := mean("host", "cpus")
	if hostCPUs == 0 {
		hostCPUs = float64(exp.NumCPU)
	}
	var out []resourceShare
	if used, ok := busiest("cpu_usage_seconds_per_second"); ok {
		capCores, what := serverCapacity(run, hostCPUs)
		if capCores > 0 {
			out = append(out, resourceShare{ResServerCPU, what, used / capCores})
		}
	}
	// With a CPU quota, the share of enforcement periods in which the box ran out of it: a box
	// whose average use stays under its quota can still be held back by it in bursts.
	if periods, ok := mean("db", "cpu_periods_per_interval"); ok && periods > 0 {
		share := 0.0
		for _, src := range dbSources {
			p, _ := mean(src, "cpu_periods_per_interval")
			throttled, _ := mean(src, "cpu_throttled_periods_per_interval")
			if p > 0 {
				share = math.Max(share, throttled/p)
			}
		}
		out = append(out, resourceShare{ResServerQuota, "the CFS periods in which the box was runnable (limits.cpus)", share})
	}
	if idle, ok := mean("host", "cpu_idle_seconds_per_second"); ok && hostCPUs > 0 {
		iowait, _ := mean("host", "cpu_iowait_seconds_per_second")
		busy := math.Max(0, hostCPUs-idle-iowait)
		out = append(out, resourceShare{ResHostCPU, cores(hostCPUs) + " (every CPU of the host)", busy / hostCPUs})
		// What neither the database's group nor the client used: other processes (and, for a
		// box the host cannot see into, its engine or VMM outside the group).
		server := allNodes("cpu_usage_seconds_per_second")
		user, _ := mean("client", "cpu_user_seconds_per_second")
		sys, _ := mean("client", "cpu_system_seconds_per_second")
		out = append(out, resourceShare{ResOtherCPU, cores(hostCPUs) + " (host CPU used outside the database's group and the client)",
			math.Max(0, busy-server-user-sys) / hostCPUs})
	}
	if busy, ok := busiest("disk_io_time_seconds_per_second"); ok {
		out = append(out, resourceShare{ResDisk, "time with I/O in flight on the data directory's device", busy})
	}
	if si, ok := mean("host", "cpu_softirq_seconds_per_second"); ok {
		out = append(out, resourceShare{ResSoftirq, "1 core (one flow's soft interrupts run on one CPU at a time)", si})
	}
	user, okU := mean("client", "cpu_user_seconds_per_second")
	sys, okS := mean("client", "cpu_system_seconds_per_second")
	if okU || okS {
		pinned := cmp.Or(run.ClientCPUs, exp.ClientCPUs)
		n := float64(cpuCount(pinned))
		what := cores(n) + " (placement.client)"
		if n == 0 {
			n, what = hostCPUs, cores(hostCPUs)+" (the client is not pinned)"
		}
		if n > 0 {
			out = append(out, resourceShare{ResClientCPU, what, (user + sys) / n})
		}
	}
	return out
}

// serverCapacity is the cores the database box may use: its CPU limit, else its cpuset, else
// the host's CPUs, from the limits read back after start.
func serverCapacity(run results.RunRow, hostCPUs float64) (float64, string) {
	var applied struct {
		Limits struct {
			CPUs   float64 `json:"cpus"`
			Cpuset string  `json:"cpuset"`
		} `json:"limits"`
		CPUs   float64 `json:"cpus"`
		Cpuset string  `json:"cpuset"`
	}
	if b, err := json.Marshal(run.Limits); err == nil {
		_ = json.Unmarshal(b, &applied)
	}
	l := applied.Limits
	if l.CPUs == 0 && l.Cpuset == "" { // an older, flat shape
		l.CPUs, l.Cpuset = applied.CPUs, applied.Cpuset
	}
	switch {
	case l.CPUs > 0:
		return l.CPUs, cores(l.CPUs) + " (limits.cpus)"
	case cpuCount(l.Cpuset) > 0:
		n := float64(cpuCount(l.Cpuset))
		return n, cores(n) + " (cpuset " + l.Cpuset + ")"
	}
	return hostCPUs, cores(hostCPUs) + " (no CPU limit: the host's CPUs)"
}

func cores(n float64) string {
	if n == 1 {
		return "1 core"
	}
	return trimZeros(strconv.FormatFloat(n, 'f', 2, 64)) + " cores"
}

// cpuCount counts the CPUs of a list such as "0-1,3"; 0 when it is empty or unreadable.
func cpuCount(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		if part == "" {
			continue
		}
		lo, hi, rng := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if rng {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a {
			return 0
		}
		n += b - a + 1
	}
	return n
}

// bottleneck names the resource with the highest share when it reaches BusyShare, and lists
// every resource's share (highest first).
func bottleneck(rs []ResourceUse) (string, string) {
	if len(rs) == 0 {
		return "", "no telemetry in the measured window"
	}
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b ResourceUse) int { return cmp.Compare(b.Share.Mean, a.Share.Mean) })
	var parts []string
	for _, r := range sorted {
		parts = append(parts, fmt.Sprintf("%s %s of %s", r.Name, pctSummary(r.Share), r.Capacity))
	}
	why := strings.Join(parts, "; ")
	if top := sorted[0]; top.Share.Mean >= BusyShare {
		if top.Name == ResHostCPU {
			// A busy host is the box's bottleneck only when the box and the client keep it
			// busy; say when most of it went elsewhere.
			for _, r := range rs {
				if r.Name == ResOtherCPU && r.Share.Mean >= top.Share.Mean/2 {
					return ResHostCPU + ", mostly outside the box and the client", why
				}
			}
		}
		return top.Name, why
	}
	return "", fmt.Sprintf("no resource at %.0f %% or more of its capacity: %s", BusyShare*100, why)
}

// pctSummary is a share as "97 % ± 2 (n=3)".
func pctSummary(s stats.Summary) string {
	if s.N == 0 {
		return "absent"
	}
	if !s.CI95.Valid {
		return fmt.Sprintf("%.0f %% (n=%d)", 100*s.Mean, s.N)
	}
	return fmt.Sprintf("%.0f %% ± %.0f (n=%d)", 100*s.Mean, 100*s.CI95.HalfWidth(), s.N)
}
