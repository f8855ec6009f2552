package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	fs   blockdevice.FS
	dev  *blockdev.Device
	proc string // for the journal's statistics
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
	return &diskCollector{fs: fs, dev: dev, proc: rt.proc}, nil
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
	if n, ok := journalCommits(c.proc, c.dev.Name); ok {
		r.setLabel("journal_commits_total", c.dev.Name, n)
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

// journalCommits reads how many transactions the ext4 journal (jbd2) of the file system on
// device dev has committed: the first number of /proc/fs/jbd2/<dev>-<inode>/info ("1234
// transactions (1200 requested), each up to 8192 blocks"). ok is false for a file system
// without a jbd2 journal (xfs, tmpfs, ext4 without has_journal).
func journalCommits(proc, dev string) (float64, bool) {
	ents, err := os.ReadDir(filepath.Join(proc, "fs", "jbd2"))
	if err != nil {
		return 0, false
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), dev+"-") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(proc, "fs", "jbd2", e.Name(), "info"))
		if err != nil {
			return 0, false
		}
		f := strings.Fields(string(b))
		if len(f) < 2 || f[1] != "transactions" {
			return 0, false
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		return float64(n), err == nil
	}
	return 0, false
}
