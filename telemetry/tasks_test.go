package telemetry

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPartsAndTasksOnThisHost samples two parts for real — a spinning child process, and one
// spinning thread of this process named by its thread id — and the host's tasks: each part's
// CPU shows under its component, a part that exits leaves no error, and the host's task sums
// and kernel-thread kinds are there.
func TestPartsAndTasksOnThisHost(t *testing.T) {
	child := exec.Command("sh", "-c", "while :; do :; done")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()

	tids := make(chan int)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		runtime.LockOSThread()
		tids <- unix.Gettid()
		for {
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	tid := <-tids

	s, err := New([]Target{
		{Source: "db", Parts: []Part{{Component: "spinner", PID: child.Process.Pid}, {Component: "spin-thread", PID: os.Getpid(), Threads: []int{tid}}}},
		{Source: "host", Host: true},
	}, 100*time.Millisecond, testClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	got, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	checkDocumented(t, got)
	sum := map[string]float64{}
	for _, x := range got {
		sum[x.Source+" "+x.Metric+"{"+x.Label+"}"] += x.Value
	}
	for _, k := range []string{"db part_cpu_user_seconds_per_second{spinner}", "db part_cpu_user_seconds_per_second{spin-thread}",
		"host tasks_cpu_seconds_per_second{}"} {
		if sum[k] <= 0 {
			t.Errorf("%s: no CPU time (%g) for a spinning task", k, sum[k])
		}
	}
	for _, k := range []string{"ksoftirqd", "kworker", "kthreads"} {
		if _, ok := sum["host kernel_threads_cpu_seconds_per_second{"+k+"}"]; !ok {
			t.Errorf("kernel threads of kind %s absent", k)
		}
	}
	if _, ok := sum["host softirq_events_per_second{net_rx}"]; !ok {
		t.Error("softirq events by kind absent")
	}
}

// TestPartValidation: a part's component becomes a metric label and reaches the report, so it
// is held to [a-z0-9-]; a part names a real pid.
func TestPartValidation(t *testing.T) {
	for _, p := range []Part{{Component: "Docker Proxy", PID: 1}, {Component: "", PID: 1}, {Component: "x", PID: 0},
		{Component: "x", PID: 1, Threads: []int{-1}}, {Component: "x\x1b[2J", PID: 1}} {
		if _, err := newPartsCollector([]Part{p}, hostRoots); err == nil {
			t.Errorf("part %+v accepted", p)
		}
	}
}

func TestKernelThreadKind(t *testing.T) {
	for comm, want := range map[string]string{"ksoftirqd/1": "ksoftirqd", "kworker/u4:2-loop3": "kworker",
		"jbd2/loop3-8": "jbd2/loop3", "jbd2/vda1-8": "jbd2/vda1", "rcu_preempt": "kthreads", "kswapd0": "kthreads"} {
		if got := kernelThreadKind(comm); got != want {
			t.Errorf("kernelThreadKind(%q) = %q, want %q", comm, got, want)
		}
	}
}

func TestJournalCommits(t *testing.T) {
	proc := t.TempDir()
	dir := proc + "/fs/jbd2/loop3-8"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir+"/info", []byte("1234 transactions (1200 requested), each up to 8192 blocks\naverage: \n"), 0o644)
	if n, ok := journalCommits(proc, "loop3"); !ok || n != 1234 {
		t.Errorf("journalCommits = %g, %v; want 1234", n, ok)
	}
	if _, ok := journalCommits(proc, "loop"); ok {
		t.Error("device loop matched loop3's journal")
	}
	if _, ok := journalCommits(proc, "vda"); ok {
		t.Error("a device without a journal has commits")
	}
}
