package attribution

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/telemetry"
)

// samples is a constant rate for each series over ten 1-second intervals.
func samples(rates map[[3]string]float64) []telemetry.Sample {
	var out []telemetry.Sample
	for t := 1; t <= 10; t++ {
		for k, v := range rates {
			out = append(out, telemetry.Sample{T: time.Duration(t) * time.Second, Source: k[0], Metric: k[1], Label: k[2], Value: v})
		}
	}
	return out
}

// TestBooksBalance: a gVisor-like box (Sentry inside the group), a docker-proxy outside it, a
// client, kernel threads with the data device's journal: every component is where it belongs,
// per operation, and they add up to the host's busy CPU.
func TestBooksBalance(t *testing.T) {
	rates := map[[3]string]float64{
		{"host", "cpu_user_seconds_per_second", ""}:                     0.9,
		{"host", "cpu_system_seconds_per_second", ""}:                   0.5,
		{"host", "cpu_softirq_seconds_per_second", ""}:                  0.1,
		{"host", "cpu_idle_seconds_per_second", ""}:                     0.5,
		{"host", "tasks_cpu_seconds_per_second", ""}:                    1.45,
		{"host", "kernel_threads_cpu_seconds_per_second", "ksoftirqd"}:  0.02,
		{"host", "kernel_threads_cpu_seconds_per_second", "jbd2/loop3"}: 0.03,
		{"host", "kernel_threads_cpu_seconds_per_second", "jbd2/vda"}:   0.01,
		{"host", "softirq_events_per_second", "net_rx"}:                 2000,
		{"db", "cpu_usage_seconds_per_second", ""}:                      0.8,
		{"db", "cpu_user_seconds_per_second", ""}:                       0.6,
		{"db", "cpu_system_seconds_per_second", ""}:                     0.2,
		{"db", "part_cpu_user_seconds_per_second", "runsc-sentry"}:      0.2,
		{"db", "part_cpu_system_seconds_per_second", "runsc-sentry"}:    0.1,
		{"db", "part_cpu_user_seconds_per_second", "docker-proxy"}:      0.1,
		{"db", "part_cpu_system_seconds_per_second", "docker-proxy"}:    0.1,
		{"db", "disk_write_ops_per_second", "loop3"}:                    50,
		{"db", "journal_commits_per_second", "loop3"}:                   10,
		{"db", "context_switches_voluntary_per_second", ""}:             4000,
		{"client", "cpu_user_seconds_per_second", ""}:                   0.3,
		{"client", "cpu_system_seconds_per_second", ""}:                 0.1,
	}
	w := Window{From: 500 * time.Millisecond, To: 10500 * time.Millisecond, Interval: time.Second, Ops: 10000}
	b := Account(samples(rates), w, Sources{DB: []string{"db"}, InGroup: []string{"runsc-sentry"}, Client: "client"})
	if !b.OK {
		t.Fatalf("no books: %v", b.NotMeasured)
	}
	// 10 s, 10,000 ops: 1 core = 1 ms/op = 1e6 ns/op.
	want := map[string]float64{
		results.CPUPerOp("host", "busy"):            1.5e6,
		results.CPUPerOp("database", "user"):        0.6e6 - 0.2e6,
		results.CPUPerOp("database", "system"):      0.2e6 - 0.1e6,
		results.CPUPerOp("box", "runsc-sentry"):     0.3e6,
		results.CPUPerOp("box", "docker-proxy"):     0.2e6,
		results.CPUPerOp("client", "generator"):     0.4e6,
		results.CPUPerOp("kernel", "ksoftirqd"):     0.02e6,
		results.CPUPerOp("kernel", "jbd2"):          0.03e6,
		results.CPUPerOp("kernel", "kthreads"):      0.01e6,
		results.CPUPerOp("kernel", "interrupts"):    0.05e6,
		results.CPUPerOp("other", "processes"):      (1.45 - 0.8 - 0.2 - 0.4 - 0.06) * 1e6,
		results.PerOp("journal_commits"):            0.01,
		results.PerOp("context_switches_voluntary"): 4,
		results.PerOp("softirq_net_rx"):             2,
	}
	for k, v := range want {
		if got := b.Metrics[k]; math.Abs(got-v) > 1 {
			t.Errorf("%s = %.1f, want %.1f", k, got, v)
		}
	}
	var sum float64
	for k, v := range b.Metrics {
		if g, _, ok := results.SplitCPUPerOp(k); ok && g != "host" {
			sum += v
		}
	}
	if math.Abs(sum-1.5e6) > 1 {
		t.Errorf("components add up to %.0f ns/op, busy is 1.5e6", sum)
	}
	if len(b.NotMeasured) != 0 {
		t.Errorf("not measured: %v", b.NotMeasured)
	}
}

// TestNotMeasuredIsNeverZero: a database whose group is not on this host and a client that ran
// elsewhere are listed as not measured and have no figure.
func TestNotMeasuredIsNeverZero(t *testing.T) {
	rates := map[[3]string]float64{
		{"host", "cpu_user_seconds_per_second", ""}:  0.5,
		{"host", "tasks_cpu_seconds_per_second", ""}: 0.5,
	}
	w := Window{From: 0, To: 10 * time.Second, Interval: time.Second, Ops: 100}
	b := Account(samples(rates), w, Sources{DB: []string{"db"}})
	got := strings.Join(b.NotMeasured, "; ")
	for _, want := range []string{"database db:", "client:"} {
		if !strings.Contains(got, want) {
			t.Errorf("not measured %q lacks %q", got, want)
		}
	}
	for _, k := range []string{results.CPUPerOp("database", "user"), results.CPUPerOp("client", "generator")} {
		if _, ok := b.Metrics[k]; ok {
			t.Errorf("%s has a figure although it was not measured", k)
		}
	}
	if b := Account(nil, w, Sources{DB: []string{"db"}}); b.OK || len(b.Metrics) != 0 {
		t.Errorf("books without the host's CPU: %+v", b)
	}
}

func TestInterruptsFrom(t *testing.T) {
	for cfg, want := range map[string]string{
		"CONFIG_HZ=250\n# CONFIG_IRQ_TIME_ACCOUNTING is not set\n": InterruptsIdle,
		"CONFIG_IRQ_TIME_ACCOUNTING=y\n":                           InterruptsAll,
		"CONFIG_HZ=250\n":                                          InterruptsUnknown,
	} {
		if got := interruptsFrom(strings.NewReader(cfg)); got != want {
			t.Errorf("%q: %s, want %s", cfg, got, want)
		}
	}
	if interruptsFrom(nil) != InterruptsUnknown {
		t.Error("no config: not unknown")
	}
	t.Logf("this host: %s", Interrupts())
}

// TestCarved: a part that is nearly the whole group (QEMU's threads in the VMM's group) leaves
// the server's sum, never a negative side.
func TestCarved(t *testing.T) {
	for _, c := range []struct{ u, s, wu, ws float64 }{{0.3, -0.2, 0.1, 0}, {-0.1, 0.4, 0, 0.3}, {0.2, 0.1, 0.2, 0.1}, {-0.1, -0.1, -0.1, -0.1}} {
		if u, s := carved(c.u, c.s); math.Abs(u-c.wu) > 1e-12 || math.Abs(s-c.ws) > 1e-12 {
			t.Errorf("carved(%v, %v) = %v, %v; want %v, %v", c.u, c.s, u, s, c.wu, c.ws)
		}
	}
}
