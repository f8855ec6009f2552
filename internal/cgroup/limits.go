package cgroup

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/internal/resource"
)

// OnlineCPUs returns the host's online CPU list (e.g. "0-1"), the cpuset of an unpinned group.
func OnlineCPUs() string {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Setting is one control file of a group and the value to write into it.
type Setting struct{ File, Value string }

// LimitFiles are the control files, in this layout's terms and in a stable order, that set the
// CPU bandwidth, cpuset, memory and CPU weight of l (the I/O controls need the data device:
// ApplyShares). For tools that take limits as their own configuration keys (LXC).
func (v Version) LimitFiles(l resource.Limits) []Setting {
	var out []Setting
	add := func(file, value string) { out = append(out, Setting{file, value}) }
	quota := int64(l.CPUs * CFSPeriod)
	if v == V2 {
		if l.CPUs > 0 {
			add("cpu.max", fmt.Sprintf("%d %d", quota, CFSPeriod))
		}
		if l.Cpuset != "" {
			add("cpuset.cpus", l.Cpuset)
		}
		if l.MemoryBytes > 0 {
			add("memory.max", strconv.FormatInt(l.MemoryBytes, 10))
		}
		if l.CPUWeight > 0 {
			add("cpu.weight", strconv.Itoa(l.CPUWeight))
		}
		return out
	}
	if l.CPUs > 0 {
		add("cpu.cfs_period_us", strconv.Itoa(CFSPeriod))
		add("cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
	}
	if l.Cpuset != "" {
		add("cpuset.cpus", l.Cpuset)
	}
	if l.MemoryBytes > 0 {
		add("memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10))
	}
	if l.CPUWeight > 0 {
		add("cpu.shares", strconv.Itoa(SharesOf(l.CPUWeight)))
	}
	return out
}
