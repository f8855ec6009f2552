// Package blockdev finds the block device that holds a directory on this host (through overlay
// mounts and loop devices), as /proc/self/mountinfo, /proc/diskstats and /sys name it. Telemetry
// reads the device's counters; the platforms on this host's cgroup tree put I/O weights and limits
// on it (platform/hostcg); doctor asks for its scheduler.
//
// Layer (docs/architecture.md): OS plumbing — it talks to the host and imports only leaves;
// the spec and everything above may import it.
package blockdev

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// ErrNoBlockDevice means a directory lives on a file system without a block device (tmpfs,
// a network file system): it has no disk metrics and no device to limit.
var ErrNoBlockDevice = errors.New("no block device")

// Device is the block device holding a directory, as /proc/diskstats names it.
type Device struct {
	Name         string `json:"name"` // "vda", "loop3p1"
	Major, Minor uint32 `json:"-"`
	Mount        string `json:"mount"`   // mount point the directory is under
	FSType       string `json:"fs_type"` // file system type of that mount ("ext4", "overlay" → the upper dir's)
	// Disk is the whole disk when Name is a partition ("loop3" for "loop3p1"); "" otherwise.
	Disk string `json:"disk,omitempty"`
	// BackingFile is the file a loop device reads and writes; "" when not a loop device.
	BackingFile string `json:"backing_file,omitempty"`
	// Backing is the device holding BackingFile, nil when not a loop device or not found.
	Backing *Device `json:"backing,omitempty"`
}

func (d *Device) String() string {
	s := fmt.Sprintf("%s (%d:%d, %s on %s)", d.Name, d.Major, d.Minor, d.FSType, d.Mount)
	if d.Backing != nil {
		s += " backed by " + d.BackingFile + " on " + d.Backing.String()
	}
	return s
}

// Resolve finds the block device that holds dir on this host: the mount it is under
// (/proc/self/mountinfo), through an overlay mount to its upper directory, the device number of
// that mount, its /proc/diskstats name, the whole disk when it is a partition, and for a loop
// device the device under its backing file. The error wraps ErrNoBlockDevice when the file
// system has no block device.
func Resolve(dir string) (*Device, error) { return ResolveAt("/proc", "/sys", dir) }

// ResolveAt is Resolve with /proc and /sys at procRoot and sysRoot.
func ResolveAt(procRoot, sysRoot, dir string) (*Device, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	path, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	mounts, disks, err := ReadTables(procRoot, sysRoot)
	if err != nil {
		return nil, err
	}
	return Find(mounts, disks, sysRoot, path)
}

// ReadTables reads this process's mount table and /proc/diskstats (under procRoot; sysRoot
// serves the block devices' attributes).
func ReadTables(procRoot, sysRoot string) ([]*procfs.MountInfo, []blockdevice.Diskstats, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, nil, err
	}
	mounts, err := fs.GetMounts()
	if err != nil {
		return nil, nil, fmt.Errorf("read mounts: %w", err)
	}
	bfs, err := blockdevice.NewFS(procRoot, sysRoot)
	if err != nil {
		return nil, nil, err
	}
	disks, err := bfs.ProcDiskstats()
	if err != nil {
		return nil, nil, fmt.Errorf("read diskstats: %w", err)
	}
	return mounts, disks, nil
}

// Find does the work of Resolve on already read mounts and diskstats (ReadTables), so that it
// can run on a captured tree: path is taken as given (no symlink evaluation), and sysRoot only
// serves /sys/dev/block links and loop backing files.
func Find(mounts []*procfs.MountInfo, disks []blockdevice.Diskstats, sysRoot, path string) (*Device, error) {
	return deviceOf(mounts, disks, sysRoot, path, 0)
}

func deviceOf(mounts []*procfs.MountInfo, disks []blockdevice.Diskstats, sysRoot, path string, depth int) (*Device, error) {
	if depth > 4 {
		return nil, fmt.Errorf("%s: overlay or loop devices nested too deep", path)
	}
	m := mountOf(mounts, path)
	if m == nil {
		return nil, fmt.Errorf("%s: no mount found", path)
	}
	if m.FSType == "overlay" {
		upper := m.SuperOptions["upperdir"]
		if upper == "" {
			return nil, fmt.Errorf("%s: overlay mount %s has no upperdir: %w", path, m.MountPoint, ErrNoBlockDevice)
		}
		return deviceOf(mounts, disks, sysRoot, upper, depth+1)
	}
	major, minor, err := parseMajorMinor(m.MajorMinorVer)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", m.MountPoint, err)
	}
	var d *blockdevice.Diskstats
	if major == 0 {
		// Anonymous device number: btrfs and friends still name a real device as source.
		if !strings.HasPrefix(m.Source, "/dev/") {
			return nil, fmt.Errorf("%s is on %s (%s): %w", path, m.MountPoint, m.FSType, ErrNoBlockDevice)
		}
		d = diskByName(disks, filepath.Base(m.Source))
	} else {
		d = diskByNumber(disks, major, minor)
	}
	if d == nil {
		return nil, fmt.Errorf("%s: device %s (%s) of mount %s not in diskstats: %w",
			path, m.MajorMinorVer, m.Source, m.MountPoint, ErrNoBlockDevice)
	}
	dev := &Device{Name: d.DeviceName, Major: d.MajorNumber, Minor: d.MinorNumber, Mount: m.MountPoint, FSType: m.FSType}

	// /sys/dev/block/M:m links to .../block/<disk> or .../block/<disk>/<partition>.
	sysDev, err := filepath.EvalSymlinks(filepath.Join(sysRoot, "dev", "block", fmt.Sprintf("%d:%d", dev.Major, dev.Minor)))
	if err != nil {
		return dev, nil // no sysfs entry: no partition or loop information, the stats still work
	}
	diskDir := sysDev
	if _, err := os.Stat(filepath.Join(sysDev, "partition")); err == nil {
		diskDir = filepath.Dir(sysDev)
		dev.Disk = filepath.Base(diskDir)
	}
	b, err := os.ReadFile(filepath.Join(diskDir, "loop", "backing_file"))
	if err != nil {
		return dev, nil // not a loop device
	}
	dev.BackingFile = strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)")
	back, err := deviceOf(mounts, disks, sysRoot, dev.BackingFile, depth+1)
	if err != nil && !errors.Is(err, ErrNoBlockDevice) {
		return nil, fmt.Errorf("loop device %s: backing file %s: %w", dev.Name, dev.BackingFile, err)
	}
	dev.Backing = back // nil for a loop file on tmpfs
	return dev, nil
}

// mountOf returns the mount whose mount point is the longest prefix of path; of several
// mounts on the same point, the last one (on top) wins.
func mountOf(mounts []*procfs.MountInfo, path string) *procfs.MountInfo {
	var best *procfs.MountInfo
	for _, m := range mounts {
		mp := m.MountPoint
		under := path == mp || mp == "/" || strings.HasPrefix(path, mp+"/")
		if under && (best == nil || len(mp) >= len(best.MountPoint)) {
			best = m
		}
	}
	return best
}

func parseMajorMinor(s string) (uint32, uint32, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("bad device number %q", s)
	}
	major, err1 := strconv.ParseUint(a, 10, 32)
	minor, err2 := strconv.ParseUint(b, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("bad device number %q: %w", s, err)
	}
	return uint32(major), uint32(minor), nil
}

// Stats is d's row of disks (a read of /proc/diskstats), nil when the device is gone.
func (d *Device) Stats(disks []blockdevice.Diskstats) *blockdevice.Diskstats {
	return diskByNumber(disks, d.Major, d.Minor)
}

func diskByNumber(disks []blockdevice.Diskstats, major, minor uint32) *blockdevice.Diskstats {
	for i := range disks {
		if disks[i].MajorNumber == major && disks[i].MinorNumber == minor {
			return &disks[i]
		}
	}
	return nil
}

func diskByName(disks []blockdevice.Diskstats, name string) *blockdevice.Diskstats {
	for i := range disks {
		if disks[i].DeviceName == name {
			return &disks[i]
		}
	}
	return nil
}
