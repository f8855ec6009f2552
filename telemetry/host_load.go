package telemetry

import "github.com/prometheus/procfs"

// hostLoad reads the load averages from /proc/loadavg: runnable plus uninterruptible tasks,
// averaged over 1, 5 and 15 minutes (no unit; named as node_exporter does).
type hostLoad struct{ fs procfs.FS }

func (hostLoad) name() string { return "host load" }

func (c hostLoad) collect(r reading) error {
	l, err := c.fs.LoadAvg()
	if err != nil {
		return err
	}
	r.set("load1", l.Load1)
	r.set("load5", l.Load5)
	r.set("load15", l.Load15)
	return nil
}
