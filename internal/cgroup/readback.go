package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/internal/resource"
)

// v1Unlimited is where cgroup v1 memory.limit_in_bytes values mean "no limit": the kernel
// shows PAGE_COUNTER_MAX pages (9223372036854771712 with 4 KiB pages), never a real amount.
const v1Unlimited = 1 << 62

// ReadLimits reads the limits applied to a group, to check that a box got what was asked:
// CPU bandwidth, cpuset, memory, and the CPU and I/O weights converted to cgroup v2's scale
// (I/O limits are per device: ReadIOMax).
// A file that is missing means that control is absent (zero); the error reports a group that
// does not exist or a file that does not parse.
func (ref Ref) ReadLimits() (resource.Limits, error) {
	var l resource.Limits
	var err error
	if ref.v == V2 {
		l, err = readLimitsV2(ref)
	} else {
		l, err = readLimitsV1(ref)
	}
	if err != nil {
		return resource.Limits{}, fmt.Errorf("limits of cgroup %s: %w", ref.path, err)
	}
	return l, nil
}

func readLimitsV1(ref Ref) (resource.Limits, error) {
	var l resource.Limits
	found := false
	var errs []error
	read := func(ctrl, file string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(ref.Dir(ctrl), file))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return "", false
		}
		found = true
		return strings.TrimSpace(string(b)), true
	}
	quota, okQ := read("cpu", "cpu.cfs_quota_us")
	period, okP := read("cpu", "cpu.cfs_period_us")
	if okQ && okP {
		cpus, err := cpusOf(quota, period)
		errs = append(errs, err)
		l.CPUs = cpus
	}
	if s, ok := read("cpuset", "cpuset.cpus"); ok {
		l.Cpuset = s
	}
	if s, ok := read("memory", "memory.limit_in_bytes"); ok {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("memory.limit_in_bytes: %w", err))
		} else if v < v1Unlimited {
			l.MemoryBytes = v
		}
	}
	// A file at its kernel default (CFQ's 500, BFQ's 100) means no weight was set: reported
	// as none, like an unset cpu.shares, rather than as a weight nobody asked for.
	for f, def := range map[string]int{"blkio.weight": 500, "blkio.bfq.weight": 100} {
		if s, ok := read("blkio", f); ok {
			w, err := parseWeight(s)
			errs = append(errs, err)
			if err == nil && w != def {
				l.IOWeight = ioWeightFromV1(w)
			}
		}
	}
	if s, ok := read("cpu", "cpu.shares"); ok && s != "1024" {
		v, err := strconv.Atoi(s)
		errs = append(errs, err)
		l.CPUWeight = CPUWeightFromShares(v)
	}
	if !found && len(errs) == 0 {
		return l, fmt.Errorf("no cpu, cpuset, memory or blkio directory under %s", Root)
	}
	return l, errors.Join(errs...)
}

func readLimitsV2(ref Ref) (resource.Limits, error) {
	var l resource.Limits
	dir := ref.Dir("")
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		return l, err
	}
	var errs []error
	read := func(file string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return "", false
		}
		return strings.TrimSpace(string(b)), true
	}
	if s, ok := read("cpu.max"); ok {
		quota, period, _ := strings.Cut(s, " ")
		cpus, err := cpusOf(quota, period)
		errs = append(errs, err)
		l.CPUs = cpus
	}
	if s, ok := read("cpuset.cpus"); ok {
		l.Cpuset = s
	}
	if s, ok := read("memory.max"); ok && s != "max" {
		v, err := strconv.ParseInt(s, 10, 64)
		errs = append(errs, err)
		l.MemoryBytes = v
	}
	for _, f := range []string{"io.weight", "io.bfq.weight"} {
		if s, ok := read(f); ok {
			w, err := parseWeight(s)
			errs = append(errs, err)
			l.IOWeight = w
			break
		}
	}
	if s, ok := read("cpu.weight"); ok && s != "100" {
		v, err := strconv.Atoi(s)
		errs = append(errs, err)
		l.CPUWeight = v
	}
	return l, errors.Join(errs...)
}

// cpusOf turns a CFS quota and period (µs; quota "-1" on v1 or "max" on v2 for none) into cores.
func cpusOf(quota, period string) (float64, error) {
	if quota == "-1" || quota == "max" {
		return 0, nil
	}
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("cpu quota %q period %q: %w", quota, period, err)
	}
	if p <= 0 {
		return 0, fmt.Errorf("cpu period %q", period)
	}
	return q / p, nil
}

// parseWeight reads a weight file: "100" (v1), or "default 100" optionally followed by
// per-device lines (v2 io.weight, BFQ); the default weight is returned.
func parseWeight(s string) (int, error) {
	first, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(first)
	if len(f) == 2 && f[0] == "default" {
		f = f[1:]
	}
	if len(f) != 1 {
		return 0, fmt.Errorf("weight %q", s)
	}
	return strconv.Atoi(f[0])
}

// CPUWeightFromShares converts cgroup v1 cpu.shares back to v2's weight scale (the inverse of
// SharesOf, rounded).
func CPUWeightFromShares(shares int) int { return int(math.Round(float64(shares) * 100 / 1024)) }

// SharesOf converts a v2-scale CPU weight to cgroup v1 cpu.shares.
func SharesOf(weight int) int { return max(2, weight*1024/100) }

// ioWeightFromV1 converts a v1 blkio weight (10–1000, default 500) to v2's scale (default 100).
func ioWeightFromV1(w int) int { return w / 5 }

// ReadIOMax reads the absolute I/O limits on device "major:minor" (io.max on v2, the
// blkio.throttle files on v1). boxbench's own accounting rule on v1 (a read limit of 2^50 B/s
// that only makes the counters count) reads as no limit.
func (ref Ref) ReadIOMax(device string) (resource.Limits, error) {
	var l resource.Limits
	if device == "" {
		return l, nil
	}
	set := func(field string, v int64) {
		if v >= accountingBps {
			return
		}
		switch field {
		case "rbps", "read_bps":
			l.ReadBps = v
		case "wbps", "write_bps":
			l.WriteBps = v
		case "riops", "read_iops":
			l.ReadIOPS = v
		case "wiops", "write_iops":
			l.WriteIOPS = v
		}
	}
	if ref.v == V2 {
		b, err := os.ReadFile(filepath.Join(ref.Dir(""), "io.max"))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return l, nil
			}
			return l, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || f[0] != device {
				continue
			}
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					set(k, n)
				}
			}
		}
		return l, nil
	}
	for _, field := range []string{"read_bps", "write_bps", "read_iops", "write_iops"} {
		b, err := os.ReadFile(filepath.Join(ref.Dir("blkio"), "blkio.throttle."+field+"_device"))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return l, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == device {
				if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					set(field, n)
				}
			}
		}
	}
	return l, nil
}
