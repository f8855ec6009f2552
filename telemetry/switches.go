package telemetry

import (
	"github.com/prometheus/procfs"

	"github.com/boxbench/boxbench/internal/cgroup"
)

// maxGroupThreads bounds the threads whose context switches groupSwitches reads each interval
// (a /proc read each): a group with more gives no value rather than slowing every tick.
const maxGroupThreads = 2048

// groupSwitches sums the context switches of every thread of a control group's processes
// (/proc/<pid>/task/*/status). A thread that exits takes its count out of the sum; the
// interval it exits in then has no value, as for any counter that went back.
type groupSwitches struct {
	ref cgroup.Ref
	fs  procfs.FS
}

func newGroupSwitches(ref cgroup.Ref, rt roots) (*groupSwitches, error) {
	fs, err := procfs.NewFS(rt.proc)
	if err != nil {
		return nil, err
	}
	return &groupSwitches{ref: ref, fs: fs}, nil
}

func (c *groupSwitches) name() string { return "context switches of " + c.ref.String() }

func (c *groupSwitches) collect(r reading) error {
	pids, err := c.ref.Pids()
	if err != nil {
		return err
	}
	var vol, invol uint64
	n := 0
	for _, pid := range pids {
		tasks, err := c.fs.AllThreads(pid)
		if err != nil {
			continue // exited
		}
		n += len(tasks)
		if n > maxGroupThreads {
			return nil // too many to read each interval: absent
		}
		for _, t := range tasks {
			st, err := t.NewStatus()
			if err != nil {
				continue
			}
			vol += st.VoluntaryCtxtSwitches
			invol += st.NonVoluntaryCtxtSwitches
		}
	}
	if n == 0 {
		return nil
	}
	r.set("context_switches_voluntary_total", float64(vol))
	r.set("context_switches_involuntary_total", float64(invol))
	return nil
}
