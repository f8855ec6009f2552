package cgroup

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ReadLimits reads the limits in effect from the group's own files (quota/period, cpuset,
// memory limit), so what a platform asked for can be checked against what the kernel holds.
// "Unlimited" values are returned as zero.
func ReadLimits(ref Ref) (Limits, error) {
	var l Limits
	var errs []error
	read := func(ctrl, file string) string {
		b, err := os.ReadFile(ref.Dir(ctrl) + "/" + file)
		if err != nil {
			errs = append(errs, err)
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	if ref.Version == V2 {
		if f := strings.Fields(read("", "cpu.max")); len(f) == 2 && f[0] != "max" {
			l.CPUs = ratio(f[0], f[1])
		}
		l.Cpuset = read("", "cpuset.cpus")
		if m := read("", "memory.max"); m != "max" && m != "" {
			l.MemoryBytes, _ = strconv.ParseInt(m, 10, 64)
		}
	} else {
		if q := read("cpu", "cpu.cfs_quota_us"); q != "" && q != "-1" {
			l.CPUs = ratio(q, read("cpu", "cpu.cfs_period_us"))
		}
		l.Cpuset = read("cpuset", "cpuset.cpus")
		if m, err := strconv.ParseInt(read("memory", "memory.limit_in_bytes"), 10, 64); err == nil && m < 1<<62 {
			l.MemoryBytes = m
		}
	}
	if len(errs) > 0 {
		return l, fmt.Errorf("read limits of cgroup %s: %w", ref.Path, errors.Join(errs...))
	}
	return l, nil
}

func ratio(q, p string) float64 {
	qf, err1 := strconv.ParseFloat(q, 64)
	pf, err2 := strconv.ParseFloat(p, 64)
	if err1 != nil || err2 != nil || pf == 0 {
		return 0
	}
	return qf / pf
}

// OnlineCPUs returns the host's online CPU list (e.g. "0-1"), the cpuset of an unpinned group.
func OnlineCPUs() string {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
