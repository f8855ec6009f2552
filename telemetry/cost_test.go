package telemetry

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/cgroup"
)

// costTargets are the targets a run samples: the database's cgroup (here this process's own
// group, which has the same files), the client (this process) and the host with a data dir.
func costTargets(t testing.TB) []Target {
	t.Helper()
	ref, err := cgroupOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return []Target{
		{Source: "db", Cgroup: &ref, DataDir: t.TempDir()},
		{Source: "client", PID: os.Getpid()},
		{Source: "host", Host: true},
	}
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestSamplingCost measures the CPU time this process spends sampling at 1 s for
// BOXBENCH_TELEMETRY_COST seconds (docs/performance.md has the figure and the command). Nothing
// else runs in the process meanwhile, so its CPU time (getrusage) is the sampler's, garbage
// collection and timers included.
func TestSamplingCost(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("BOXBENCH_TELEMETRY_COST"))
	if secs <= 0 {
		t.Skip("set BOXBENCH_TELEMETRY_COST=<seconds> to measure the sampling cost")
	}
	s, err := New(costTargets(t), time.Second, testClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	wall0, cpu0 := time.Now(), cpuTime()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(secs) * time.Second)
	samples, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	wall, cpu := time.Since(wall0), cpuTime()-cpu0
	ticks := 0
	for _, x := range samples {
		if x.Source == "host" && x.Metric == "load1" {
			ticks++
		}
	}
	t.Logf("cgroup %s; %d samples over %v in %d readings: CPU %v = %.3f %% of one core, %v per reading",
		cgroup.HostMode(), len(samples), wall.Round(time.Millisecond), ticks, cpu,
		100*cpu.Seconds()/wall.Seconds(), cpu/time.Duration(max(ticks, 1)))
}

// BenchmarkTick is one reading of every collector for a typical run's targets.
func BenchmarkTick(b *testing.B) {
	s, err := New(costTargets(b), time.Second, testClock(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.tick()
		s.samples = s.samples[:0]
	}
}

// BenchmarkAccounting is BenchmarkTick side by side with and without the collectors that only
// where the time goes needs (every task's CPU and the kernel threads, the group's context
// switches, two box parts): the difference is what the accounting costs the client's process
// per reading (docs/performance.md, "Where the time goes: its cost").
func BenchmarkAccounting(b *testing.B) {
	parts := []Part{{Component: "self", PID: os.Getpid()}, {Component: "parent", PID: os.Getppid()}}
	for _, with := range []bool{false, true} {
		b.Run(map[bool]string{false: "without", true: "with"}[with], func(b *testing.B) {
			ts := costTargets(b)
			ts[0].Parts = parts
			s, err := New(ts, time.Second, testClock(), nil)
			if err != nil {
				b.Fatal(err)
			}
			if !with {
				kept := s.series[:0]
				for _, x := range s.series {
					switch x.c.(type) {
					case *hostTasks, *groupSwitches, *partsCollector:
					default:
						kept = append(kept, x)
					}
				}
				s.series = kept
			}
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				s.tick()
				s.samples = s.samples[:0]
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/tick")
			b.ReportMetric(float64(groupThreads(*ts[0].Cgroup)), "group-threads")
		})
	}
}

// groupThreads counts the threads of a group's processes (what groupSwitches reads).
func groupThreads(ref cgroup.Ref) int {
	pids, _ := ref.Pids()
	n := 0
	for _, p := range pids {
		ts, _ := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		n += len(ts)
	}
	return n
}
