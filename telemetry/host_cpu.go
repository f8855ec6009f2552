package telemetry

import "github.com/prometheus/procfs"

// newHostCollectors returns the host-wide collectors a Host target asks for (network and disk
// are separate because they take their own arguments).
func newHostCollectors(rt roots) ([]collector, error) {
	fs, err := procfs.NewFS(rt.proc)
	if err != nil {
		return nil, err
	}
	return []collector{
		hostCPU{fs},
		hostMemory{fs: fs, vmstat: rt.proc + "/vmstat"},
		hostLoad{fs},
		hostPressure{fs},
	}, nil
}

// hostCPU reads CPU time by mode summed over all CPUs from /proc/stat. Guest time is already
// part of user time and is not repeated. Divided by the interval, a mode's rate is in cores.
type hostCPU struct{ fs procfs.FS }

func (hostCPU) name() string { return "host cpu" }

func (c hostCPU) collect(r reading) error {
	st, err := c.fs.Stat()
	if err != nil {
		return err
	}
	t := st.CPUTotal
	for mode, v := range map[string]float64{
		"user": t.User, "nice": t.Nice, "system": t.System, "idle": t.Idle, "iowait": t.Iowait,
		"irq": t.IRQ, "softirq": t.SoftIRQ, "steal": t.Steal,
	} {
		r.set("cpu_"+mode+"_seconds_total", v)
	}
	r.set("cpus", float64(len(st.CPU)))
	q := st.SoftIRQ
	for kind, v := range map[string]uint64{
		"hi": q.Hi, "timer": q.Timer, "net_tx": q.NetTx, "net_rx": q.NetRx, "block": q.Block,
		"irq_poll": q.BlockIoPoll, "tasklet": q.Tasklet, "sched": q.Sched, "hrtimer": q.Hrtimer, "rcu": q.Rcu,
	} {
		r.setLabel("softirq_events_total", kind, float64(v))
	}
	return nil
}
