package telemetry

import (
	"fmt"

	"github.com/prometheus/procfs/blockdevice"

	"github.com/boxbench/boxbench/internal/blockdev"
)

// sectorBytes is the unit of the sector counts in /proc/diskstats, whatever the device's own
// sector size.
const sectorBytes = 512

// diskCollector reads /proc/diskstats (prometheus/procfs) for the device holding a data
// directory, and for the device under a loop device's backing file. Metrics carry the device
// name as Label; the backing device's metrics are named disk_backing_*.
type diskCollector struct {
	fs  blockdevice.FS
	dev *blockdev.Device
}

func newDiskCollector(dir string, rt roots) (*diskCollector, error) {
	dev, err := blockdev.ResolveAt(rt.proc, rt.sys, dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	return newDiskCollectorFor(dev, rt)
}

func newDiskCollectorFor(dev *blockdev.Device, rt roots) (*diskCollector, error) {
	fs, err := blockdevice.NewFS(rt.proc, rt.sys)
	if err != nil {
		return nil, err
	}
	return &diskCollector{fs: fs, dev: dev}, nil
}

func (c *diskCollector) describe() string { return c.dev.String() }

func (c *diskCollector) name() string { return "disk " + c.dev.Name }

func (c *diskCollector) collect(r reading) error {
	disks, err := c.fs.ProcDiskstats()
	if err != nil {
		return err
	}
	if err := diskValues(r, disks, "disk_", c.dev); err != nil {
		return err
	}
	if c.dev.Backing != nil {
		return diskValues(r, disks, "disk_backing_", c.dev.Backing)
	}
	return nil
}

func diskValues(r reading, disks []blockdevice.Diskstats, prefix string, dev *blockdev.Device) error {
	d := dev.Stats(disks)
	if d == nil {
		return fmt.Errorf("device %s (%d:%d) no longer in diskstats", dev.Name, dev.Major, dev.Minor)
	}
	l := dev.Name
	r.setLabel(prefix+"read_bytes_total", l, float64(d.ReadSectors)*sectorBytes)
	r.setLabel(prefix+"write_bytes_total", l, float64(d.WriteSectors)*sectorBytes)
	r.setLabel(prefix+"read_ops_total", l, float64(d.ReadIOs))
	r.setLabel(prefix+"write_ops_total", l, float64(d.WriteIOs))
	// io_ticks: milliseconds with at least one request in flight; its rate is utilisation.
	r.setLabel(prefix+"io_time_seconds_total", l, float64(d.IOsTotalTicks)/1000)
	// Flush counts arrived in Linux 5.5 (20 fields); older kernels do not offer them.
	if d.IoStatsCount >= 20 {
		r.setLabel(prefix+"flush_ops_total", l, float64(d.FlushRequestsCompleted))
	}
	return nil
}
