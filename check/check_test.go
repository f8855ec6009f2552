package check

import (
	"fmt"
	"github.com/boxbench/boxbench/internal/resource"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/telemetry"
)

// series makes samples of one metric at 1 s steps ending at T = 1 s, 2 s, ...
func series(source, metric, label string, values ...float64) []telemetry.Sample {
	out := make([]telemetry.Sample, len(values))
	for i, v := range values {
		out[i] = telemetry.Sample{T: time.Duration(i+1) * time.Second, Source: source, Metric: metric, Label: label, Value: v}
	}
	return out
}

func join(ss ...[]telemetry.Sample) []telemetry.Sample {
	var out []telemetry.Sample
	for _, s := range ss {
		out = append(out, s...)
	}
	return out
}

// hostCPU makes pre-run host samples with busy cores out of 2.
func hostCPU(busy float64) []telemetry.Sample {
	return join(
		series("host", "cpu_user_seconds_per_second", "", busy*0.7, busy*0.7, busy*0.7),
		series("host", "cpu_system_seconds_per_second", "", busy*0.2, busy*0.2, busy*0.2),
		series("host", "cpu_softirq_seconds_per_second", "", busy*0.1, busy*0.1, busy*0.1),
		series("host", "cpu_idle_seconds_per_second", "", 2-busy, 2-busy, 2-busy),
		series("host", "cpu_iowait_seconds_per_second", "", 0, 0, 0),
	)
}

// threeNodes are the nodes of a 3-node cluster whose limits read back as l.
func threeNodes(l resource.Limits) []Node {
	return []Node{{Name: "n1", Source: "db", Applied: &l}, {Name: "n2", Source: "db-n2", Applied: &l}, {Name: "n3", Source: "db-n3", Applied: &l}}
}

func ops(n, errs int64) []OpCount { return []OpCount{{Op: "read", Count: n, Errors: errs}} }

func TestEvaluate(t *testing.T) {
	const mib = 1 << 20
	enough := ops(100000, 0)
	applied := func(l resource.Limits) *resource.Limits { return &l }
	for _, tc := range []struct {
		name string
		f    Facts
		th   Thresholds
		want []string // "code/severity", in order
		says []string // substrings the messages must contain
	}{
		{name: "clean run", f: Facts{Ops: enough, Wall: 60 * time.Second, ClientCPU: 30 * time.Second, ClientCores: 2,
			PreRun: hostCPU(0.05), Spec: resource.Limits{CPUs: 1}, Applied: applied(resource.Limits{CPUs: 1})}},

		{name: "client saturated", f: Facts{Ops: enough, Wall: 10 * time.Second, ClientCPU: 19 * time.Second, ClientCores: 2},
			want: []string{"client_cpu_saturated/warning"}, says: []string{"1.90 of its 2", "95.0 %", "90.0 %", "bottleneck"}},
		{name: "client below threshold", f: Facts{Ops: enough, Wall: 10 * time.Second, ClientCPU: 17 * time.Second, ClientCores: 2}},
		// The CPU of warm-up and window (8 s) over the 6 s window read 1.2 cores of 1.
		{name: "client over the time it was charged in", f: Facts{Ops: enough, Wall: 6 * time.Second, ClientCPU: 6 * time.Second,
			ClientCPUWall: 8 * time.Second, ClientCores: 1}},
		{name: "client saturated over its own wall", f: Facts{Ops: enough, Wall: 6 * time.Second, ClientCPU: 6 * time.Second,
			ClientCPUWall: 6200 * time.Millisecond, ClientCores: 1}, want: []string{"client_cpu_saturated/warning"}},
		{name: "client from telemetry", f: Facts{Ops: enough, Wall: 3 * time.Second, ClientCores: 1, Samples: join(
			series("client", "cpu_user_seconds_per_second", "", 0.8, 0.8, 0.8),
			series("client", "cpu_system_seconds_per_second", "", 0.15, 0.15, 0.15))},
			want: []string{"client_cpu_saturated/warning"}, says: []string{"telemetry"}},
		{name: "client threshold tuned", f: Facts{Ops: enough, Wall: 10 * time.Second, ClientCPU: 17 * time.Second, ClientCores: 2},
			th: Thresholds{ClientCPURatio: 0.8}, want: []string{"client_cpu_saturated/warning"}},

		{name: "client waited for cpu", f: Facts{Ops: enough, WarmupEnd: time.Second, Samples: join(
			series("client", "sched_wait_seconds_per_second", "", 5, 0.6, 0.8),
			series("client", "sched_run_seconds_per_second", "", 0.1, 0.3, 0.3))},
			want: []string{"client_waited_for_cpu/warning"}, says: []string{"70.0 %", "0.70 s/s waiting", "0.30 cores", "50.0 %"}},
		{name: "client waited in warm-up only", f: Facts{Ops: enough, WarmupEnd: time.Second, Samples: join(
			series("client", "sched_wait_seconds_per_second", "", 5, 0.1, 0.1),
			series("client", "sched_run_seconds_per_second", "", 0.1, 0.3, 0.3))}},
		// Issue 19: "waited 69.5 % … (0.01 s/s waiting, 0.00 cores running)".
		{name: "client waited a ratio of near-zero amounts", f: Facts{Ops: enough, Samples: join(
			series("client", "sched_wait_seconds_per_second", "", 0.01, 0.01, 0.01),
			series("client", "sched_run_seconds_per_second", "", 0.004, 0.004, 0.004))}},
		{name: "client wait unknown", f: Facts{Ops: enough, Samples: series("client", "sched_run_seconds_per_second", "", 0.3)}},

		{name: "throttled", f: Facts{Ops: enough, Applied: applied(resource.Limits{CPUs: 0.2}), Spec: resource.Limits{CPUs: 0.2},
			Samples: join(series("db", "cpu_periods_per_interval", "", 10, 10, 10, 10),
				series("db", "cpu_throttled_periods_per_interval", "", 9, 0, 1, 2))},
			want: []string{"db_cpu_throttled/warning"}, says: []string{"30.0 %", "(12 of 40)", "5.0 %", "0.2 cpus"}},
		// Issue 29: a limit the spec set on purpose, the same for the baseline, is the design.
		{name: "throttled at a limit by design", f: Facts{Ops: enough, Applied: applied(resource.Limits{CPUs: 0.5}),
			Spec: resource.Limits{CPUs: 0.5}, Baseline: &resource.Limits{CPUs: 0.5},
			Samples: join(series("db", "cpu_periods_per_interval", "", 10, 10, 10, 10),
				series("db", "cpu_throttled_periods_per_interval", "", 10, 10, 9, 10))},
			want: []string{"db_cpu_at_limit/info"}, says: []string{"limit of 0.5 cpus", "97.5 %", "(39 of 40)", "per share of a core", "latency"}},
		{name: "throttled, the baseline's limit differs", f: Facts{Ops: enough, Applied: applied(resource.Limits{CPUs: 0.485}),
			Spec: resource.Limits{CPUs: 0.485}, Baseline: &resource.Limits{CPUs: 0.5},
			Samples: join(series("db", "cpu_periods_per_interval", "", 10, 10),
				series("db", "cpu_throttled_periods_per_interval", "", 10, 10))},
			want: []string{"db_cpu_throttled/warning"}, says: []string{"(0.485 cpus)", "its baseline asks for 0.5 cpus"}},
		{name: "throttled, the baseline has no limit", f: Facts{Ops: enough, Applied: applied(resource.Limits{CPUs: 0.5}),
			Spec: resource.Limits{CPUs: 0.5}, Baseline: &resource.Limits{},
			Samples: join(series("db", "cpu_periods_per_interval", "", 10, 10),
				series("db", "cpu_throttled_periods_per_interval", "", 10, 10))},
			want: []string{"db_cpu_throttled/warning"}, says: []string{"its baseline asks for none"}},
		{name: "throttled by a limit nobody asked for", f: Facts{Ops: enough, Applied: applied(resource.Limits{CPUs: 1}),
			Baseline: &resource.Limits{}, Samples: join(series("db", "cpu_periods_per_interval", "", 10, 10),
				series("db", "cpu_throttled_periods_per_interval", "", 10, 10))},
			want: []string{"db_cpu_throttled/warning"}, says: []string{"(1 cpus)", "asks for no CPU limit"}},
		{name: "throttled, the limit did not take effect", f: Facts{Ops: enough, Applied: applied(resource.Limits{CPUs: 0.4}),
			Spec: resource.Limits{CPUs: 0.5}, Baseline: &resource.Limits{CPUs: 0.5},
			Samples: join(series("db", "cpu_periods_per_interval", "", 10, 10),
				series("db", "cpu_throttled_periods_per_interval", "", 10, 10))},
			want: []string{"db_cpu_throttled/warning", "limits_differ/error"}},
		{name: "throttled only in warm-up", f: Facts{Ops: enough, WarmupEnd: 2 * time.Second,
			Samples: join(series("db", "cpu_periods_per_interval", "", 10, 10, 10, 10),
				series("db", "cpu_throttled_periods_per_interval", "", 10, 10, 0, 0))}},
		{name: "throttled other source name", f: Facts{Ops: enough, DBSource: "pg",
			Samples: join(series("pg", "cpu_periods_per_interval", "", 10, 10),
				series("pg", "cpu_throttled_periods_per_interval", "", 5, 5))},
			want: []string{"db_cpu_throttled/warning"}},
		{name: "no quota, no periods", f: Facts{Ops: enough, Samples: join(series("db", "cpu_periods_per_interval", "", 0, 0),
			series("db", "cpu_throttled_periods_per_interval", "", 0, 0))}},

		{name: "swap active", f: Facts{Ops: enough, Samples: join(series("host", "swap_used_bytes", "", 0, 10*mib, 20*mib),
			series("host", "swap_in_bytes_per_second", "", 0, mib, 0))},
			want: []string{"swap_used/warning"}, says: []string{"up to 20.0 MiB", "swapped in 512.0 KiB/s", "thresholds 16.0 MiB, 64.0 KiB/s"}},
		{name: "swap idle", f: Facts{Ops: enough, Samples: join(series("host", "swap_used_bytes", "", 50*mib, 50*mib),
			series("host", "swap_in_bytes_per_second", "", 0, 0), series("host", "swap_out_bytes_per_second", "", 0, 0))},
			want: []string{"swap_used/info"}, says: []string{"nothing was swapped"}},
		{name: "db cgroup swap", f: Facts{Ops: enough, Samples: series("db", "memory_swap_bytes", "", 0, 20*mib)},
			want: []string{"swap_used/warning"}, says: []string{"database's cgroup had up to 20.0 MiB"}},
		// Seen on every PostgreSQL run of issue 19: a host without a swap device, and a v1
		// cgroup whose memsw minus memory read 256 KiB.
		{name: "no swap device, cgroup memsw noise", f: Facts{Ops: enough, Samples: join(
			series("host", "swap_total_bytes", "", 0, 0), series("host", "swap_used_bytes", "", 0, 0),
			series("db", "memory_swap_bytes", "", 256<<10, 256<<10))}},
		{name: "no swap device, large cgroup reading", f: Facts{Ops: enough, Samples: join(
			series("host", "swap_total_bytes", "", 0, 0), series("db", "memory_swap_bytes", "", 64*mib, 64*mib))}},
		{name: "trivial swap", f: Facts{Ops: enough, Samples: join(
			series("host", "swap_total_bytes", "", 4096*mib, 4096*mib), series("host", "swap_used_bytes", "", 256<<10, 256<<10),
			series("host", "swap_in_bytes_per_second", "", 4096, 4096), series("db", "memory_swap_bytes", "", 256<<10, 256<<10))}},
		{name: "no swap", f: Facts{Ops: enough, Samples: series("host", "swap_used_bytes", "", 0, 0)}},

		{name: "host busy", f: Facts{Ops: enough, PreRun: hostCPU(0.6)},
			want: []string{"host_busy_before_run/warning"}, says: []string{"30.0 % busy", "0.60 of 2.00 cores", "10.0 %"}},
		{name: "host quiet", f: Facts{Ops: enough, PreRun: hostCPU(0.1)}},

		{name: "memory-bound read from disk", f: Facts{Ops: enough, Dataset: DatasetMemory, WarmupEnd: time.Second,
			Samples: series("db", "io_read_bytes_per_second", "", 100*mib, 3*mib, 3*mib)},
			want: []string{"memory_bound_read_disk/warning"}, says: []string{"3.0 MiB/s", "1.0 MiB/s", "database's cgroup"}},
		{name: "memory-bound reads only in warm-up", f: Facts{Ops: enough, Dataset: DatasetMemory, WarmupEnd: 2 * time.Second,
			Samples: series("db", "io_read_bytes_per_second", "", 100*mib, 100*mib, 0, 0)}},
		{name: "memory-bound, host device fallback", f: Facts{Ops: enough, Dataset: DatasetMemory,
			Samples: join(series("db", "disk_read_bytes_per_second", "vda", 2*mib, 2*mib))},
			want: []string{"memory_bound_read_disk/warning"}, says: []string{"data directory's device"}},
		{name: "memory-bound, no I/O data", f: Facts{Ops: enough, Dataset: DatasetMemory},
			want: []string{"disk_reads_unknown/info"}},
		{name: "disk-bound without reads", f: Facts{Ops: enough, Dataset: DatasetDisk,
			Samples: series("db", "io_read_bytes_per_second", "", 0, 1024, 0)},
			want: []string{"disk_bound_no_disk_reads/warning"}, says: []string{"512 B/s", "4.0 KiB/s", "served from memory"}},
		{name: "disk-bound reading", f: Facts{Ops: enough, Dataset: DatasetDisk,
			Samples: series("db", "io_read_bytes_per_second", "", 50*mib, 40*mib)}},
		{name: "dataset unknown", f: Facts{Ops: enough, Samples: series("db", "io_read_bytes_per_second", "", 50*mib)}},

		{name: "limits differ", f: Facts{Ops: enough,
			Spec:    resource.Limits{CPUs: 0.5, Cpuset: "1", MemoryBytes: 512 * mib, IOWeight: 300},
			Applied: applied(resource.Limits{CPUs: 0.6, Cpuset: "0-1", IOWeight: 100})},
			want: []string{"limits_differ/error", "limits_differ/error", "limits_differ/error", "limits_differ/error"},
			says: []string{"asks for 0.5 cpus but the cgroup has 0.6 cpus", `"1" but the cgroup has "0-1"`,
				"512.0 MiB but the cgroup has none", "asks for 300 but the cgroup has 100"}},
		{name: "limits equal within tolerance", f: Facts{Ops: enough,
			Spec:    resource.Limits{CPUs: 0.5, Cpuset: "0,1", MemoryBytes: 512*mib + 100},
			Applied: applied(resource.Limits{CPUs: 0.5, Cpuset: "0-1", MemoryBytes: 512 * mib, IOWeight: 100})}},
		{name: "limits unknown", f: Facts{Ops: enough, Spec: resource.Limits{CPUs: 1}}},

		// A cluster: the database's own checks look at every node, and each warning names the
		// nodes it concerns (a throttled third node is not hidden behind a quiet first one).
		{name: "cluster: third node throttled", f: Facts{Ops: enough, Nodes: threeNodes(resource.Limits{CPUs: 0.5}),
			Spec: resource.Limits{CPUs: 0.5}, Samples: join(
				series("db", "cpu_periods_per_interval", "", 10, 10), series("db", "cpu_throttled_periods_per_interval", "", 0, 0),
				series("db-n2", "cpu_periods_per_interval", "", 10, 10), series("db-n2", "cpu_throttled_periods_per_interval", "", 0, 0),
				series("db-n3", "cpu_periods_per_interval", "", 10, 10), series("db-n3", "cpu_throttled_periods_per_interval", "", 4, 4))},
			want: []string{"db_cpu_throttled/warning"}, says: []string{"node n3: the database was throttled in 40.0 %"}},
		{name: "cluster: nodes at a limit by design", f: Facts{Ops: enough, Nodes: threeNodes(resource.Limits{CPUs: 0.5}),
			Spec: resource.Limits{CPUs: 0.5}, Baseline: &resource.Limits{CPUs: 0.5}, Samples: join(
				series("db", "cpu_periods_per_interval", "", 10, 10), series("db", "cpu_throttled_periods_per_interval", "", 10, 10),
				series("db-n2", "cpu_periods_per_interval", "", 10, 10), series("db-n2", "cpu_throttled_periods_per_interval", "", 0, 0),
				series("db-n3", "cpu_periods_per_interval", "", 10, 10), series("db-n3", "cpu_throttled_periods_per_interval", "", 8, 8))},
			want: []string{"db_cpu_at_limit/info"}, says: []string{"node n1: the database ran at its CPU limit", "node n3:"}},
		{name: "cluster: quiet nodes", f: Facts{Ops: enough, Nodes: threeNodes(resource.Limits{CPUs: 0.5}),
			Spec: resource.Limits{CPUs: 0.5}, Samples: join(
				series("db-n3", "cpu_periods_per_interval", "", 10, 10), series("db-n3", "cpu_throttled_periods_per_interval", "", 0, 0))}},
		{name: "cluster: a node's limit not applied", f: Facts{Ops: enough, Spec: resource.Limits{CPUs: 0.5, MemoryBytes: 256 * mib},
			Nodes: []Node{{Name: "n1", Source: "db", Applied: applied(resource.Limits{CPUs: 0.5, MemoryBytes: 256 * mib})},
				{Name: "n2", Source: "db-n2", Applied: applied(resource.Limits{CPUs: 0.5})},
				{Name: "n3", Source: "db-n3", Applied: applied(resource.Limits{CPUs: 0.5, MemoryBytes: 256 * mib})}}},
			want: []string{"limits_differ/error"}, says: []string{"node n2: memory limit: the cell asks for 256.0 MiB but the cgroup has none"}},
		{name: "cluster: nodes share the cell's cpuset", f: Facts{Ops: enough, Spec: resource.Limits{Cpuset: "0-3"},
			Nodes: []Node{{Name: "n1", Source: "db", Applied: applied(resource.Limits{Cpuset: "0-1"})},
				{Name: "n2", Source: "db-n2", Applied: applied(resource.Limits{Cpuset: "2-3"})},
				{Name: "n3", Source: "db-n3", Applied: applied(resource.Limits{Cpuset: "4"})}}},
			want: []string{"limits_differ/error"}, says: []string{`node n3: cpuset: the cell asks for "0-3" (this node a share of it) but the cgroup has "4"`}},
		{name: "cluster: the same doubt on two nodes", f: Facts{Ops: enough, Dataset: DatasetMemory, Nodes: threeNodes(resource.Limits{}),
			Samples: join(series("db", "io_read_bytes_per_second", "", 0, 0), series("db-n2", "io_read_bytes_per_second", "", 3*mib, 3*mib),
				series("db-n3", "io_read_bytes_per_second", "", 5*mib, 5*mib))},
			want: []string{"memory_bound_read_disk/warning"}, says: []string{"node n2: this memory-bound run read 3.0 MiB/s", "; node n3: this memory-bound run read 5.0 MiB/s"}},
		{name: "cluster: no I/O data on any node", f: Facts{Ops: enough, Dataset: DatasetMemory, Nodes: threeNodes(resource.Limits{})},
			want: []string{"disk_reads_unknown/info"}, says: []string{"nodes n1, n2, n3: cannot tell"}},
		{name: "cluster: swap in a node's cgroup", f: Facts{Ops: enough, Nodes: threeNodes(resource.Limits{}),
			Samples: series("db-n2", "memory_swap_bytes", "", 0, 20*mib)},
			want: []string{"swap_used/warning"}, says: []string{"node n2's cgroup had up to 20.0 MiB"}},

		{name: "error rate", f: Facts{Ops: []OpCount{{Op: "read", Count: 8000, Errors: 150}, {Op: "update", Count: 1800, Errors: 50}}},
			want: []string{"error_rate_high/warning"}, says: []string{"2.0 %", "(200 of 10000)", "1.0 %"}},
		{name: "error rate at threshold", f: Facts{Ops: ops(99000, 1000)}},

		{name: "too few ops", f: Facts{Ops: []OpCount{{Op: "read", Count: 5000}, {Op: "insert", Count: 150}}},
			want: []string{"too_few_ops_for_percentile/error"}, says: []string{"insert: 150", "p99.9 needs 1000"}},
		{name: "too few for p99", f: Facts{Ops: ops(99, 0), Percentiles: []float64{50, 99}},
			want: []string{"too_few_ops_for_percentile/error"}, says: []string{"p99 needs 100"}},
		{name: "exactly enough", f: Facts{Ops: ops(1000, 0), Percentiles: []float64{99.9}}},
		{name: "stricter tail", f: Facts{Ops: ops(1000, 0), Percentiles: []float64{99}}, th: Thresholds{TailOps: 20},
			want: []string{"too_few_ops_for_percentile/error"}, says: []string{"p99 needs 2000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Evaluate(tc.f, tc.th)
			var codes []string
			var msgs []string
			for _, w := range got {
				codes = append(codes, w.Code+"/"+string(w.Severity))
				msgs = append(msgs, w.Message)
			}
			if fmt.Sprint(codes) != fmt.Sprint(tc.want) {
				t.Fatalf("codes %v, want %v\n%s", codes, tc.want, strings.Join(msgs, "\n"))
			}
			all := strings.Join(msgs, "\n")
			for _, s := range tc.says {
				if !strings.Contains(all, s) {
					t.Errorf("messages lack %q:\n%s", s, all)
				}
			}
		})
	}
}

func TestNeedOps(t *testing.T) {
	for _, tc := range []struct {
		q    float64
		want int64
	}{{50, 2}, {90, 10}, {95, 20}, {99, 100}, {99.9, 1000}, {99.99, 10000}} {
		if got := needOps(tc.q, 1); got != tc.want {
			t.Errorf("needOps(%g) = %d, want %d", tc.q, got, tc.want)
		}
	}
}

func TestWindow(t *testing.T) {
	ss := join(series("db", "x", "a", 1, 2, 3, 4), series("db", "x", "b", 10, 20), series("other", "x", "a", 99))
	w := window(ss, "db", "x", 2*time.Second)
	// Samples at 3 s and 4 s have intervals starting at 2 s and 3 s; label b ends at 2 s.
	if len(w["a"]) != 2 || w["a"][0].v != 3 || w["a"][1].dt != 1 || len(w["b"]) != 0 {
		t.Errorf("window = %+v", w)
	}
	all := window(ss, "db", "x", 0)
	if r, _ := meanRate(all); r != 3+20 {
		t.Errorf("meanRate = %g, want 23 (time-weighted, summed over labels)", r)
	}
	if s, _ := total(all); s != 40 {
		t.Errorf("total = %g, want 40", s)
	}
}

// TestScanInServer: operations on a database that says each keyed operation reads the whole
// data set get its warning, with its code; on another database, or with no operations, nothing.
func TestScanInServer(t *testing.T) {
	ops := []OpCount{{Op: "read", Count: 100}, {Op: "scan", Count: 10}}
	scans := Facts{ScansPerKey: "Store 1.0, which reads every row", ScansPerKeyCode: "store_full_reads"}
	for _, tc := range []struct {
		f    Facts
		ops  []OpCount
		want bool
	}{
		{scans, ops, true},
		{scans, []OpCount{{Op: "update", Errors: 3}}, true},
		{Facts{}, ops, false},
		{scans, []OpCount{{Op: "read"}}, false},
	} {
		tc.f.Ops = tc.ops
		ws := scanInServer(tc.f, Thresholds{})
		if got := len(ws) == 1; got != tc.want {
			t.Fatalf("%q %v: warnings %v, want one: %v", tc.f.ScansPerKey, tc.ops, ws, tc.want)
		}
		if tc.want && (ws[0].Code != "store_full_reads" || !strings.Contains(ws[0].Message, "ran on Store 1.0, which reads every row")) {
			t.Errorf("warning %+v: not the database's code and reason", ws[0])
		}
	}
}
