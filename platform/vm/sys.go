package vm

import (
	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/cgroup"
)

// setAffinity pins thread tid to one core.
func setAffinity(tid, core int) error {
	var set unix.CPUSet
	set.Zero()
	set.Set(core)
	return unix.SchedSetaffinity(tid, &set)
}

// deviceNumber is "major:minor" of a block device node, "" when it is not one.
func deviceNumber(path string) string {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return ""
	}
	return cgroup.DeviceOf(unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))
}
