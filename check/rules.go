package check

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boxbench/boxbench/dbms"
)

// always selects every sample of a series, warm-up included.
const always = time.Duration(math.MinInt64)

func clientCPU(f Facts, th Thresholds) []Warning {
	if f.Wall <= 0 || f.ClientCores <= 0 {
		return nil
	}
	var cores float64
	source := "its own accounting"
	if f.ClientCPU > 0 {
		// Divided by the time it was charged in: the quickstart's client, pinned to one cpu,
		// read 1.12 cores when its warm-up's CPU was divided by the window alone.
		cores = f.ClientCPU.Seconds() / cmp.Or(f.ClientCPUWall, f.Wall).Seconds()
	} else {
		user, ok1 := meanRate(window(f.Samples, "client", "cpu_user_seconds_per_second", f.WarmupEnd))
		sys, ok2 := meanRate(window(f.Samples, "client", "cpu_system_seconds_per_second", f.WarmupEnd))
		if !ok1 || !ok2 {
			return nil
		}
		cores, source = user+sys, "telemetry"
	}
	ratio := cores / f.ClientCores
	if ratio < th.ClientCPURatio {
		return nil
	}
	return []Warning{{
		Code:     CodeClientCPU,
		Severity: SeverityWarning,
		Message: fmt.Sprintf("the client used %.2f of its %g CPU cores (%s, from %s) during the measured window, "+
			"at or above %s: the load generator may be the bottleneck, so throughput and latency may measure the "+
			"client rather than the database", cores, f.ClientCores, pct(ratio), source, pct(th.ClientCPURatio)),
	}}
}

// clientWaited flags a client whose threads spent much of the time they were runnable waiting
// for a CPU: a reply that arrives then sits unread, so the latency includes the client's own
// queueing, and a closed loop issues fewer requests. Any client can be crowded out; one under
// placement.clientPolicy idle is by design whenever anything else wants its CPU.
func clientWaited(f Facts, th Thresholds) []Warning {
	wait, ok1 := meanRate(window(f.Samples, "client", "sched_wait_seconds_per_second", f.WarmupEnd))
	run, ok2 := meanRate(window(f.Samples, "client", "sched_run_seconds_per_second", f.WarmupEnd))
	if !ok1 || !ok2 || wait+run <= 0 {
		return nil
	}
	// A share of two near-zero amounts (an idle client waiting 10 ms in a second) is noise: the
	// wait itself must be large enough to move latency.
	ratio := wait / (wait + run)
	if ratio <= th.ClientWaitRatio || wait < th.ClientWaitSeconds {
		return nil
	}
	return []Warning{{
		Code:     CodeClientWaited,
		Severity: SeverityWarning,
		Message: fmt.Sprintf("the client's threads waited for a CPU %s of the time they were runnable during the "+
			"measured window (%.2f s/s waiting, %.2f cores running), above %s: replies sat unread while the client "+
			"waited, so latency includes the client's queueing and a closed loop sent fewer requests; give the client "+
			"its own cores (placement.client) or, under placement.clientPolicy idle, use normal",
			pct(ratio), wait, run, pct(th.ClientWaitRatio)) + fmt.Sprintf(" (and at least %.2f s/s)", th.ClientWaitSeconds),
	}}
}

func throttled(f Facts, th Thresholds) []Warning {
	thr, ok1 := total(window(f.Samples, f.DBSource, "cpu_throttled_periods_per_interval", f.WarmupEnd))
	per, ok2 := total(window(f.Samples, f.DBSource, "cpu_periods_per_interval", f.WarmupEnd))
	if !ok1 || !ok2 || per == 0 {
		return nil
	}
	ratio := thr / per
	if ratio <= th.ThrottledRatio {
		return nil
	}
	share := fmt.Sprintf("%s of its CFS periods after warm-up (%.0f of %.0f), above %s", pct(ratio), thr, per, pct(th.ThrottledRatio))
	if limit, ok := limitByDesign(f, th); ok {
		return []Warning{{
			Code:     CodeAtLimit,
			Severity: SeverityInfo,
			Message: fmt.Sprintf("the database ran at its CPU limit of %g cpus, set by the spec and the same for its "+
				"baseline: throttled in %s. Throughput is the work it does per share of a core: network-stack work done "+
				"in its own threads (a bridge, NAT) takes from that share, while a cost paid outside its cgroup "+
				"(docker-proxy, softirq on other cpus, the client) shows in throughput only where it leaves the server "+
				"waiting, otherwise in latency and the CPU time per operation", limit, share),
		}}
	}
	limit, why := "", "compare it only with cells that have the same limit"
	if f.Applied != nil && f.Applied.CPUs > 0 {
		limit = fmt.Sprintf(" (%g cpus)", f.Applied.CPUs)
	}
	switch {
	case f.Spec.CPUs <= 0:
		why = "the cell asks for no CPU limit, so something else set this one"
	case f.Baseline != nil && f.Baseline.CPUs != f.Spec.CPUs:
		why = fmt.Sprintf("its baseline asks for %s, so the comparison measures the limits as much as the box",
			orNone(f.Baseline.CPUs > 0, fmt.Sprintf("%g cpus", f.Baseline.CPUs)))
	}
	return []Warning{{
		Code:     CodeThrottled,
		Severity: SeverityWarning,
		Message: fmt.Sprintf("the database was throttled in %s: it ran into its CPU limit%s, so throughput is set by the "+
			"limit and latency includes waits for the next period; %s", share, limit, why),
	}}
}

// limitByDesign says whether the box's CPU limit is the experiment's design: the cell asked for
// it, it took effect, and the cell's baseline asks for the same one, so every run of the
// comparison ran under one limit (a run whose limit did not take effect is limits_differ).
func limitByDesign(f Facts, th Thresholds) (float64, bool) {
	want := f.Spec.CPUs
	if want <= 0 || f.Applied == nil || f.Baseline == nil || f.Baseline.CPUs != want {
		return 0, false
	}
	return want, math.Abs(f.Applied.CPUs-want) <= th.LimitTolerance*want
}

// hostHasSwap says whether the host had a swap device during the run: false when telemetry
// saw SwapTotal = 0 throughout (no /proc/swaps entry), true when it saw some, or when unknown.
func hostHasSwap(f Facts) bool {
	totals, ok := maxValue(window(f.Samples, "host", "swap_total_bytes", always))
	return !ok || totals > 0
}

// swap warns about swap that can matter: an amount above th.SwapBytes in use, or paging in or
// out above th.SwapRateBytes after warm-up. A host without a swap device cannot swap, whatever
// a cgroup's memsw counter minus its memory counter (two reads a moment apart on v1) says.
func swap(f Facts, th Thresholds) []Warning {
	if !hostHasSwap(f) {
		return nil
	}
	var parts []string
	active := false
	if used, ok := maxValue(window(f.Samples, "host", "swap_used_bytes", always)); ok && used > th.SwapBytes {
		parts = append(parts, fmt.Sprintf("the host had up to %s in swap", dbms.FormatBytes(used)))
	}
	for _, dir := range []string{"in", "out"} {
		if r, ok := meanRate(window(f.Samples, "host", "swap_"+dir+"_bytes_per_second", f.WarmupEnd)); ok && r > th.SwapRateBytes {
			parts = append(parts, fmt.Sprintf("swapped %s %s/s after warm-up", dir, dbms.FormatBytes(r)))
			active = true
		}
	}
	for _, n := range dbNodes(f) {
		if used, ok := maxValue(window(f.Samples, n.Source, "memory_swap_bytes", always)); ok && used > th.SwapBytes {
			who := "the database's cgroup"
			if n.Name != "" {
				who = "node " + n.Name + "'s cgroup"
			}
			parts = append(parts, fmt.Sprintf("%s had up to %s in swap", who, dbms.FormatBytes(used)))
			active = true
		}
	}
	if len(parts) == 0 {
		return nil
	}
	w := Warning{Code: CodeSwap, Severity: SeverityWarning}
	meaning := "pages of the database or the client may be read back from disk, adding latency that has " +
		"nothing to do with the box"
	if !active {
		w.Severity = SeverityInfo
		meaning = "but nothing was swapped in or out during the run, so the numbers are unaffected; " +
			"the host is short of memory, though"
	}
	w.Message = fmt.Sprintf("swap in use: %s (thresholds %s, %s/s): %s", strings.Join(parts, ", "),
		dbms.FormatBytes(th.SwapBytes), dbms.FormatBytes(th.SwapRateBytes), meaning)
	return []Warning{w}
}

var busyModes = []string{"user", "nice", "system", "irq", "softirq", "steal"}

func hostBusy(f Facts, th Thresholds) []Warning {
	var busy, all float64
	for _, mode := range append(slices.Clone(busyModes), "idle", "iowait") {
		r, ok := meanRate(window(f.PreRun, "host", "cpu_"+mode+"_seconds_per_second", always))
		if !ok {
			continue
		}
		all += r
		if slices.Contains(busyModes, mode) {
			busy += r
		}
	}
	if all == 0 {
		return nil
	}
	ratio := busy / all
	if ratio <= th.HostBusyRatio {
		return nil
	}
	return []Warning{{
		Code:     CodeHostBusy,
		Severity: SeverityWarning,
		Message: fmt.Sprintf("the host's CPUs were %s busy (%.2f of %.2f cores) before the run started, above %s: "+
			"something else is running; it competes with the database and the client and makes this run slower "+
			"and noisier than its neighbours in the matrix", pct(ratio), busy, all, pct(th.HostBusyRatio)),
	}}
}

// readRate is the mean disk read rate after warm-up: the database cgroup's own reads when its
// block I/O is accounted, else the reads of the device under its data directory.
func readRate(f Facts) (rate float64, what string, ok bool) {
	if r, ok := meanRate(window(f.Samples, f.DBSource, "io_read_bytes_per_second", f.WarmupEnd)); ok {
		return r, "the database's cgroup", true
	}
	for _, src := range []string{f.DBSource, "host"} {
		if r, ok := meanRate(window(f.Samples, src, "disk_read_bytes_per_second", f.WarmupEnd)); ok {
			return r, "the data directory's device (all processes)", true
		}
	}
	return 0, "", false
}

func datasetIO(f Facts, th Thresholds) []Warning {
	if f.Dataset != DatasetMemory && f.Dataset != DatasetDisk {
		return nil
	}
	rate, what, ok := readRate(f)
	if !ok {
		return []Warning{{
			Code:     CodeNoIOData,
			Severity: SeverityInfo,
			Message: fmt.Sprintf("cannot tell whether this %s-bound run read from disk: no block I/O telemetry "+
				"(cgroup v1 counts I/O only once blk-throttle is active on the device; no data directory device)", f.Dataset),
		}}
	}
	switch {
	case f.Dataset == DatasetMemory && rate > th.MemoryBoundReadBytes:
		return []Warning{{
			Code:     CodeMemoryBoundIO,
			Severity: SeverityWarning,
			Message: fmt.Sprintf("this memory-bound run read %s/s from disk after warm-up (%s), above %s/s: the data "+
				"set did not stay in the database's memory (limit too small for it, or the warm-up too short), so "+
				"latencies include disk reads and this is not a memory-bound result", dbms.FormatBytes(rate), what, dbms.FormatBytes(th.MemoryBoundReadBytes)),
		}}
	case f.Dataset == DatasetDisk && rate < th.DiskBoundReadBytes:
		return []Warning{{
			Code:     CodeDiskBoundNoIO,
			Severity: SeverityWarning,
			Message: fmt.Sprintf("this disk-bound run read only %s/s from disk after warm-up (%s), below %s/s: the "+
				"data set is served from memory (a page cache or buffer pool larger than the limit implies), so "+
				"this is not a disk-bound result", dbms.FormatBytes(rate), what, dbms.FormatBytes(th.DiskBoundReadBytes)),
		}}
	}
	return nil
}

func limits(f Facts, th Thresholds) []Warning {
	if f.Applied == nil {
		return nil
	}
	s, a := f.Spec, *f.Applied
	var out []Warning
	add := func(what, asked, got string) {
		out = append(out, Warning{
			Code:     CodeLimitsDiffer,
			Severity: SeverityError,
			Message: fmt.Sprintf("%s: the cell asks for %s but the cgroup has %s (tolerance %s): the run does not "+
				"measure the cell's configuration, and its overhead against the baseline is meaningless", what, asked, got,
				pct(th.LimitTolerance)),
		})
	}
	differ := func(want, got float64) bool { return got == 0 || math.Abs(got-want) > th.LimitTolerance*want }
	if s.CPUs > 0 && differ(s.CPUs, a.CPUs) {
		add("CPU limit", fmt.Sprintf("%g cpus", s.CPUs), orNone(a.CPUs > 0, fmt.Sprintf("%g cpus", a.CPUs)))
	}
	if s.Cpuset != "" && f.cpusetShare && !withinCPUs(a.Cpuset, s.Cpuset) {
		add("cpuset", strconv.Quote(s.Cpuset)+" (this node a share of it)", orNone(a.Cpuset != "", strconv.Quote(a.Cpuset)))
	} else if s.Cpuset != "" && !f.cpusetShare && !sameCPUs(s.Cpuset, a.Cpuset) {
		add("cpuset", strconv.Quote(s.Cpuset), orNone(a.Cpuset != "", strconv.Quote(a.Cpuset)))
	}
	if s.MemoryBytes > 0 && differ(float64(s.MemoryBytes), float64(a.MemoryBytes)) {
		add("memory limit", dbms.FormatBytes(float64(s.MemoryBytes)), orNone(a.MemoryBytes > 0, dbms.FormatBytes(float64(a.MemoryBytes))))
	}
	if s.IOWeight > 0 && s.IOWeight != a.IOWeight {
		add("io weight", strconv.Itoa(s.IOWeight), orNone(a.IOWeight > 0, strconv.Itoa(a.IOWeight)))
	}
	return out
}

func orNone(ok bool, s string) string {
	if ok {
		return s
	}
	return "none"
}

// sameCPUs compares two cpu lists ("0-2,4") as sets; an unparsable list compares as text.
func sameCPUs(a, b string) bool {
	sa, err1 := cpuSet(a)
	sb, err2 := cpuSet(b)
	if err1 != nil || err2 != nil {
		return strings.TrimSpace(a) == strings.TrimSpace(b)
	}
	return slices.Equal(sa, sb)
}

func cpuSet(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, err
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func errorRate(f Facts, th Thresholds) []Warning {
	var ops, errs int64
	for _, o := range f.Ops {
		ops += o.Count
		errs += o.Errors
	}
	if ops+errs == 0 {
		return nil
	}
	ratio := float64(errs) / float64(ops+errs)
	if ratio <= th.ErrorRatio {
		return nil
	}
	return []Warning{{
		Code:     CodeErrorRate,
		Severity: SeverityWarning,
		Message: fmt.Sprintf("%s of operations failed (%d of %d), above %s: failed operations are left out of "+
			"throughput and latency, and fast failures or timeouts bias both; fix the cause before comparing",
			pct(ratio), errs, ops+errs, pct(th.ErrorRatio)),
	}}
}

// needOps is how many operations percentile q (e.g. 99.9) needs so that TailOps of them lie
// beyond it.
func needOps(q, tail float64) int64 {
	if q >= 100 {
		return math.MaxInt64
	}
	return int64(math.Ceil(tail*100/(100-q) - 1e-9))
}

func tooFewOps(f Facts, th Thresholds) []Warning {
	qs := f.Percentiles
	if qs == nil {
		qs = DefaultPercentiles
	}
	var out []Warning
	for _, o := range f.Ops {
		var failing []string
		for _, q := range qs {
			if n := needOps(q, th.TailOps); o.Count < n {
				failing = append(failing, fmt.Sprintf("p%g needs %d", q, n))
			}
		}
		if len(failing) == 0 {
			continue
		}
		out = append(out, Warning{
			Code:     CodeTooFewOps,
			Severity: SeverityError,
			Message: fmt.Sprintf("%s: %d operations in the measured window, too few for the percentiles shown (%s, "+
				"to have %g beyond each): such a percentile is just the largest few values; report it as not "+
				"available or run longer", o.Op, o.Count, strings.Join(failing, ", "), th.TailOps),
		})
	}
	return out
}

// scanInServer: a database whose keyed operations read the whole data set (its
// dbms.Traits.ScansPerKey, with the database's own code): latency grows with the data set, not
// with the work YCSB asks for.
func scanInServer(f Facts, _ Thresholds) []Warning {
	if f.ScansPerKey == "" {
		return nil
	}
	var n int64
	for _, o := range f.Ops {
		n += o.Count + o.Errors
	}
	if n == 0 {
		return nil
	}
	return []Warning{{Code: f.ScansPerKeyCode, Severity: SeverityWarning,
		Message: fmt.Sprintf("%d operations ran on %s; latency grows with the data set, not with the operation "+
			"(docs/databases.md)", n, f.ScansPerKey)}}
}
