package cgroup

import (
	"os"
	"strings"
)

// OnlineCPUs returns the host's online CPU list (e.g. "0-1"), the cpuset of an unpinned group.
func OnlineCPUs() string {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
