package ycsb

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/driver/noop"
	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/workload"
	"golang.org/x/sys/unix"
)

// threadCPU is the kernel's per-thread account of this process: the sum over
// /proc/self/task/*/schedstat of the time each thread ran (ns), and each thread's
// Cpus_allowed_list.
func threadCPU(t *testing.T) (time.Duration, map[string]string) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	allowed := map[string]string{}
	for _, task := range tasks {
		dir := "/proc/self/task/" + task.Name()
		ss, err1 := os.ReadFile(dir + "/schedstat")
		st, err2 := os.ReadFile(dir + "/status")
		if err1 != nil || err2 != nil {
			continue // the thread exited between listing and reading
		}
		ns, err := strconv.ParseInt(strings.Fields(string(ss))[0], 10, 64)
		if err != nil {
			t.Fatalf("%s/schedstat: %v", dir, err)
		}
		sum += time.Duration(ns)
		for _, l := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
				allowed[task.Name()] = strings.TrimSpace(v)
			}
		}
	}
	return sum, allowed
}

// A busy client pinned to one cpu reads at most one core, and what it reads is what the
// kernel charged its threads over the measured window (warm-up excluded). The quickstart read
// "1.12 of its 1 CPU cores": the CPU of warm-up and window together divided by the window.
func TestClientCPUPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator for 3 s")
	}
	var was unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		t.Fatal(err)
	}
	var cpu int
	for !was.IsSet(cpu) {
		cpu++
	}
	orig := placement.FormatList(setList(was))
	if _, err := placement.Pin(strconv.Itoa(cpu)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := placement.Pin(orig); err != nil {
			t.Errorf("restoring the affinity %s: %v", orig, err)
		}
	}()

	cfg := DefaultConfig()
	cfg.Mix, cfg.RecordCount, cfg.Threads = "c", 1000, 4
	cfg.Warmup, cfg.Duration = time.Second, 2*time.Second
	w, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cpu0 time.Duration
	var t0 time.Time
	res, err := w.run(context.Background(), noop.DB{}, workload.Clock{Start: time.Now()}, func() {
		t0 = time.Now()
		cpu0, _ = threadCPU(t)
	})
	cpu1, allowed := threadCPU(t)
	wall := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	for tid, l := range allowed {
		if l != strconv.Itoa(cpu) {
			t.Errorf("thread %s may run on cpus %s, not only on cpu %d: the pin leaks", tid, l, cpu)
		}
	}
	kernel := (cpu1 - cpu0).Seconds() / wall.Seconds()
	got, ok := res.ClientCores()
	if !ok {
		t.Fatalf("no client CPU reading: %+v", res)
	}
	t.Logf("client read %.3f cores (%s over %s); the kernel charged its threads %.3f cores (%s over %s)",
		got, res.ClientCPU, res.ClientCPUWall, kernel, cpu1-cpu0, wall)
	if got > 1.02 {
		t.Errorf("a client pinned to one cpu read %.3f cores", got)
	}
	// The generator's own reading and the kernel's are taken a few microseconds apart at both
	// ends of a 2 s window: they agree closely, however loaded the host.
	if kernel <= 0 || got/kernel < 0.9 || got/kernel > 1.1 {
		t.Errorf("client read %.3f cores, the kernel charged %.3f over the measured window", got, kernel)
	}
	if res.ClientCPUs != 1 {
		t.Errorf("client cpus %d, want 1 (its affinity)", res.ClientCPUs)
	}
}

func setList(s unix.CPUSet) []int {
	var out []int
	for c := 0; c < 1024; c++ {
		if s.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}
