// Package attribution accounts the host's busy CPU of a run's measured window to the
// components that did the work — the database's group, the box's machinery, neighbours, the
// client, the kernel's threads and interrupts, every other task — per operation, and the
// database box's other costs per operation (bytes and requests, journal commits, context
// switches, throttled time, faults). It reads only telemetry samples taken on the run's
// clock; nothing is measured here. The names of what it returns are results'
// (results.CPUPerOp, results.PerOp).
//
// The books balance by construction: other.processes is every task's CPU less the tasks
// named, kernel.interrupts the busy CPU no task was charged for. What they hold is the test
// of the accounting: on a quiet host both are small, and a run where other is a large share
// of the busy CPU had something unaccounted beside it (check's cpu_unaccounted).
package attribution

import (
	"slices"
	"strings"
	"time"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/telemetry"
)

// Window is the measured window on the run's clock and the operations done in it.
type Window struct {
	From, To time.Duration
	// Interval is the telemetry interval: a sample counts when the middle of the interval it
	// ends lies in the window.
	Interval time.Duration
	Ops      int64
}

// Sources names whose samples are whose.
type Sources struct {
	// DB are the database's boxes' sources (a cluster's nodes: "db", "db-n2" …).
	DB []string
	// InGroup are the components of box parts that run inside the database's group (gVisor's
	// Sentry and Gofer): their CPU is carved out of the database's.
	InGroup []string
	// Neighbours are the neighbours' sources and names (the component's name).
	Neighbours []Neighbour
	// Client is the client process's source ("client"), "" when the client was not a process
	// of this host that telemetry sampled (a client site: its CPU, where it ran here, is in
	// other.processes).
	Client string
	// NotMeasured are components the caller already knows it could not measure ("box db: why"),
	// listed first in Books.NotMeasured.
	NotMeasured []string
	// DataDevice is the block device of the database's data directory ("loop3"): its journal
	// thread is kernel.jbd2, other journals are kernel.kthreads. "" takes the device of the
	// first database source's disk samples.
	DataDevice string
}

// Neighbour is a neighbour's telemetry source and its name.
type Neighbour struct{ Source, Name string }

// Books is one run's accounting.
type Books struct {
	// Metrics are the figures per operation, named by results.CPUPerOp and results.PerOp.
	Metrics map[string]float64
	// NotMeasured are the components the samples could not account, "component: why".
	NotMeasured []string
	// Busy and Other are the host's busy CPU and other.processes, ns per operation (Other is
	// what check's cpu_unaccounted weighs); ok is false when the host's CPU was not sampled.
	Busy, Other float64
	OK          bool
}

// series is the mean rate of each (source, metric, label) over the window's samples.
type series map[[3]string]float64

func meanRates(samples []telemetry.Sample, w Window) series {
	sum, n := map[[3]string]float64{}, map[[3]string]int{}
	for _, s := range samples {
		if !w.holds(s) {
			continue
		}
		k := [3]string{s.Source, s.Metric, s.Label}
		sum[k] += s.Value
		n[k]++
	}
	out := series{}
	for k, v := range sum {
		out[k] = v / float64(n[k])
	}
	return out
}

// MeanRate is one series' mean rate over the window's samples (cores for a CPU series); ok is
// false when no sample of it falls in the window.
func MeanRate(samples []telemetry.Sample, w Window, source, metric, label string) (float64, bool) {
	var sum float64
	n := 0
	for _, s := range samples {
		if s.Source == source && s.Metric == metric && s.Label == label && w.holds(s) {
			sum += s.Value
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// holds says whether a sample counts in the window: the middle of the interval it ends is in it.
func (w Window) holds(s telemetry.Sample) bool {
	mid := s.T - w.Interval/2
	return mid > w.From && mid < w.To
}

func (s series) get(source, metric, label string) (float64, bool) {
	v, ok := s[[3]string{source, metric, label}]
	return v, ok
}

// labels are the labels a source's metric has in the window.
func (s series) labels(source, metric string) []string {
	var out []string
	for k := range s {
		if k[0] == source && k[1] == metric {
			out = append(out, k[2])
		}
	}
	return out
}

// Account does the books of one run. It returns no metrics (OK false) without operations, a
// window, or the host's CPU in the samples.
func Account(samples []telemetry.Sample, w Window, src Sources) Books {
	if w.Ops <= 0 || w.To <= w.From {
		return Books{}
	}
	a := accountant{s: meanRates(samples, w), w: w, src: src, m: map[string]float64{}, miss: slices.Clone(src.NotMeasured)}
	if a.src.DataDevice == "" && len(src.DB) > 0 {
		if devs := a.s.labels(src.DB[0], "disk_write_ops_per_second"); len(devs) == 1 {
			a.src.DataDevice = devs[0]
		}
	}
	return a.books()
}

type accountant struct {
	s    series
	w    Window
	src  Sources
	m    map[string]float64
	miss []string
}

// perOp turns a mean rate (per second: cores for CPU) into a figure per operation; scale 1e9
// makes CPU seconds nanoseconds.
func (a *accountant) perOp(rate, scale float64) float64 {
	return rate * (a.w.To - a.w.From).Seconds() * scale / float64(a.w.Ops)
}

func (a *accountant) cpu(group, name string, cores float64) float64 {
	ns := a.perOp(cores, 1e9)
	a.m[results.CPUPerOp(group, name)] += ns
	return ns
}

func (a *accountant) books() Books {
	busy, ok := a.busy()
	if !ok {
		return Books{NotMeasured: append(a.miss, "host: its CPU was not sampled")}
	}
	a.cpu(results.GroupHost, "busy", busy)
	named := a.database() + a.neighbours() + a.client() + a.kernelThreads()
	a.costs()
	tasks, ok := a.s.get("host", "tasks_cpu_seconds_per_second", "")
	var other float64
	if ok {
		other = a.cpu(results.GroupOther, "processes", tasks-named)
		a.cpu(results.GroupKernel, "interrupts", busy-tasks)
	} else {
		a.miss = append(a.miss, "other, kernel interrupts: the host's task times were not sampled")
	}
	return Books{Metrics: a.m, NotMeasured: a.miss, Busy: a.perOp(busy, 1e9), Other: other, OK: true}
}

// busy is the host's busy CPU in cores: every mode but idle, iowait and steal (guest time is
// inside user).
func (a *accountant) busy() (float64, bool) {
	var sum float64
	any := false
	for _, mode := range []string{"user", "nice", "system", "irq", "softirq"} {
		if v, ok := a.s.get("host", "cpu_"+mode+"_seconds_per_second", ""); ok {
			sum += v
			any = true
		}
	}
	return sum, any
}

// database accounts the database's groups and their parts, returning the cores of every task
// it named that runs outside the groups' own sum.
func (a *accountant) database() float64 {
	var user, sys, outside float64
	groups := 0
	for _, db := range a.src.DB {
		usage, ok := a.s.get(db, "cpu_usage_seconds_per_second", "")
		if !ok {
			a.miss = append(a.miss, "database "+db+": its group is not on this host's tree")
		} else {
			groups++
			u, _ := a.s.get(db, "cpu_user_seconds_per_second", "")
			k, _ := a.s.get(db, "cpu_system_seconds_per_second", "")
			// The group's exact total split in the ratio of its user and system ticks.
			share := 0.5
			if u+k > 0 {
				share = u / (u + k)
			}
			user += usage * share
			sys += usage * (1 - share)
		}
		for _, comp := range a.s.labels(db, "part_cpu_user_seconds_per_second") {
			u, _ := a.s.get(db, "part_cpu_user_seconds_per_second", comp)
			k, _ := a.s.get(db, "part_cpu_system_seconds_per_second", comp)
			a.cpu(results.GroupBox, comp, u+k)
			if slices.Contains(a.src.InGroup, comp) {
				user, sys = user-u, sys-k
			} else {
				outside += u + k
			}
		}
	}
	if groups > 0 {
		user, sys = carved(user, sys)
		a.cpu(results.GroupDatabase, "user", user)
		a.cpu(results.GroupDatabase, "system", sys)
	}
	return user + sys + outside + a.inGroup()
}

// carved keeps what is left of the group's user and system time once its parts are carved out
// from going below zero on one side: the group's split comes from its own ticks and a part's
// from its threads' ticks, which disagree by a few ticks, most where the parts are nearly the
// whole group (a VMM). Their sum, what the server itself did, is kept; a negative side is moved
// to the other.
func carved(user, sys float64) (float64, float64) {
	switch {
	case user < 0 && sys >= 0:
		return 0, sys + user
	case sys < 0 && user >= 0:
		return user + sys, 0
	}
	return user, sys
}

// inGroup is the cores of the parts inside the database's groups (already out of user+sys).
func (a *accountant) inGroup() float64 {
	var sum float64
	for _, db := range a.src.DB {
		for _, comp := range a.src.InGroup {
			u, _ := a.s.get(db, "part_cpu_user_seconds_per_second", comp)
			k, _ := a.s.get(db, "part_cpu_system_seconds_per_second", comp)
			sum += u + k
		}
	}
	return sum
}

func (a *accountant) neighbours() float64 {
	var sum float64
	for _, n := range a.src.Neighbours {
		if v, ok := a.s.get(n.Source, "cpu_usage_seconds_per_second", ""); ok {
			a.cpu(results.GroupNeighbour, n.Name, v)
			sum += v
		} else {
			a.miss = append(a.miss, "neighbour "+n.Name+": its group is not on this host's tree")
		}
	}
	return sum
}

func (a *accountant) client() float64 {
	if a.src.Client != "" {
		u, okU := a.s.get(a.src.Client, "cpu_user_seconds_per_second", "")
		k, okK := a.s.get(a.src.Client, "cpu_system_seconds_per_second", "")
		if okU || okK {
			a.cpu(results.GroupClient, "generator", u+k)
			return u + k
		}
	}
	a.miss = append(a.miss, "client: it ran at a client site, not as a process telemetry sampled (its CPU on this host is in other)")
	return 0
}

func (a *accountant) kernelThreads() float64 {
	var sum float64
	for _, kind := range a.s.labels("host", "kernel_threads_cpu_seconds_per_second") {
		v, _ := a.s.get("host", "kernel_threads_cpu_seconds_per_second", kind)
		name := kind
		switch {
		case a.src.DataDevice != "" && kind == "jbd2/"+a.src.DataDevice:
			name = "jbd2"
		case strings.HasPrefix(kind, "jbd2/"):
			name = "kthreads"
		}
		a.cpu(results.GroupKernel, name, v)
		sum += v
	}
	return sum
}

// costs are the database box's other costs per operation, and the host's soft interrupts by
// kind.
func (a *accountant) costs() {
	for _, db := range a.src.DB {
		for metric, what := range map[string]string{
			"io_read_bytes_per_second": "io_read_bytes", "io_write_bytes_per_second": "io_write_bytes",
			"io_read_ops_per_second": "io_read_ops", "io_write_ops_per_second": "io_write_ops",
			"context_switches_voluntary_per_second":   "context_switches_voluntary",
			"context_switches_involuntary_per_second": "context_switches_involuntary",
			"memory_major_faults_per_second":          "major_faults", "memory_minor_faults_per_second": "minor_faults",
		} {
			if v, ok := a.s.get(db, metric, ""); ok {
				a.m[results.PerOp(what)] += a.perOp(v, 1)
			}
		}
		if v, ok := a.s.get(db, "cpu_throttled_seconds_per_second", ""); ok {
			a.m[results.PerOp("throttled_ns")] += a.perOp(v, 1e9)
		}
		if a.src.DataDevice != "" {
			for metric, what := range map[string]string{"disk_flush_ops_per_second": "disk_flushes", "journal_commits_per_second": "journal_commits"} {
				if v, ok := a.s.get(db, metric, a.src.DataDevice); ok {
					a.m[results.PerOp(what)] += a.perOp(v, 1)
				}
			}
		}
	}
	for _, kind := range a.s.labels("host", "softirq_events_per_second") {
		v, _ := a.s.get("host", "softirq_events_per_second", kind)
		a.m[results.PerOp("softirq_"+kind)] = a.perOp(v, 1)
	}
}
