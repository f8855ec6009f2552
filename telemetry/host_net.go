package telemetry

import (
	"log/slog"

	"github.com/prometheus/procfs"
)

// netCollector reads per-interface traffic from /proc/net/dev (prometheus/procfs) in the
// sampler's network namespace (the host's, for boxbench). Metrics carry the interface as Label.
type netCollector struct {
	fs     procfs.FS
	only   map[string]bool // nil: all interfaces
	log    *slog.Logger
	warned map[string]bool
}

func newNetCollector(ifaces []string, rt roots, log *slog.Logger) (*netCollector, error) {
	fs, err := procfs.NewFS(rt.proc)
	if err != nil {
		return nil, err
	}
	c := &netCollector{fs: fs, log: log, warned: map[string]bool{}}
	if len(ifaces) > 0 {
		c.only = map[string]bool{}
		for _, i := range ifaces {
			c.only[i] = true
		}
	}
	return c, nil
}

func (*netCollector) name() string { return "network" }

func (c *netCollector) collect(r reading) error {
	nd, err := c.fs.NetDev()
	if err != nil {
		return err
	}
	for name, l := range nd {
		if c.only != nil && !c.only[name] {
			continue
		}
		r.setLabel("net_receive_bytes_total", name, float64(l.RxBytes))
		r.setLabel("net_transmit_bytes_total", name, float64(l.TxBytes))
		r.setLabel("net_receive_packets_total", name, float64(l.RxPackets))
		r.setLabel("net_transmit_packets_total", name, float64(l.TxPackets))
		r.setLabel("net_receive_drops_total", name, float64(l.RxDropped))
		r.setLabel("net_transmit_drops_total", name, float64(l.TxDropped))
	}
	// An interface asked for but not there (a container's veth that is gone) is absent; say so
	// once rather than every second.
	for name := range c.only {
		if _, ok := nd[name]; !ok && !c.warned[name] {
			c.warned[name] = true
			c.log.Warn("telemetry: network interface not found; its metrics are absent", "interface", name)
		}
	}
	return nil
}
