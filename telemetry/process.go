package telemetry

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/prometheus/procfs"
)

// userHZ is the unit of utime/stime in /proc/<pid>/stat. It is 100 on every Linux architecture
// boxbench targets (procfs assumes the same).
const userHZ = 100

// processCollector reads one process's CPU time, context switches and resident memory
// (prometheus/procfs). CPU time in /proc/<pid>/stat covers all threads, but the context switch
// counts in /proc/<pid>/status are the main thread's only, so they are summed over
// /proc/<pid>/task/*/status. When a thread exits its switches leave the sum; the sum then goes
// backwards and that interval's values are absent. The same holds for the scheduler's run and
// run-queue wait times (/proc/<pid>/task/*/schedstat), which are per thread only.
type processCollector struct {
	pid  int
	fs   procfs.FS
	proc procfs.Proc
}

func newProcessCollector(pid int, rt roots) (*processCollector, error) {
	fs, err := procfs.NewFS(rt.proc)
	if err != nil {
		return nil, err
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	return &processCollector{pid: pid, fs: fs, proc: p}, nil
}

func (c *processCollector) name() string { return fmt.Sprintf("process %d", c.pid) }

func (c *processCollector) collect(r reading) error {
	st, err := c.proc.Stat()
	if err != nil {
		return err
	}
	r.set("cpu_user_seconds_total", float64(st.UTime)/userHZ)
	r.set("cpu_system_seconds_total", float64(st.STime)/userHZ)
	r.set("memory_rss_bytes", float64(st.ResidentMemory()))
	r.set("threads", float64(st.NumThreads))
	tasks, err := c.fs.AllThreads(c.pid)
	if err != nil {
		return err
	}
	var vol, invol, run, wait uint64
	sched := true
	for _, task := range tasks {
		status, err := task.NewStatus()
		if err != nil {
			continue // the thread exited between listing and reading
		}
		vol += status.VoluntaryCtxtSwitches
		invol += status.NonVoluntaryCtxtSwitches
		switch ss, err := task.Schedstat(); {
		case err == nil:
			run += ss.RunningNanoseconds
			wait += ss.WaitingNanoseconds
		case errors.Is(err, fs.ErrNotExist):
			sched = false // a kernel without CONFIG_SCHED_INFO
		}
	}
	r.set("context_switches_voluntary_total", float64(vol))
	r.set("context_switches_involuntary_total", float64(invol))
	if sched {
		r.set("sched_run_seconds_total", float64(run)/1e9)
		r.set("sched_wait_seconds_total", float64(wait)/1e9)
	}
	return nil
}
