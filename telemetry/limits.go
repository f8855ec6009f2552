package telemetry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/cgroup"
)

// Limits are resource limits as a control group's files show them. A zero value means no limit
// (or the kernel does not offer that control), the same convention as platform.Limits.
type Limits struct {
	CPUs        float64 `json:"cpus,omitempty"`         // CFS quota / period, in cores
	Cpuset      string  `json:"cpuset,omitempty"`       // cpuset.cpus as written, e.g. "0-1"
	MemoryBytes int64   `json:"memory_bytes,omitempty"` // memory limit
	IOWeight    int     `json:"io_weight,omitempty"`    // blkio/io (BFQ) weight, default weight for v2
}

// v1Unlimited is where cgroup v1 memory.limit_in_bytes values mean "no limit": the kernel
// shows PAGE_COUNTER_MAX pages (9223372036854771712 with 4 KiB pages), never a real amount.
const v1Unlimited = 1 << 62

// ReadLimits reads the limits applied to a group, to check that a box got what was asked.
// A file that is missing means that control is absent (zero); the error reports a group that
// does not exist or a file that does not parse.
func ReadLimits(ref cgroup.Ref) (Limits, error) {
	var l Limits
	var err error
	if ref.Version == cgroup.V2 {
		l, err = readLimitsV2(ref)
	} else {
		l, err = readLimitsV1(ref)
	}
	if err != nil {
		return Limits{}, fmt.Errorf("telemetry: limits of cgroup %s: %w", ref.Path, err)
	}
	return l, nil
}

func readLimitsV1(ref cgroup.Ref) (Limits, error) {
	var l Limits
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
	for _, f := range []string{"blkio.weight", "blkio.bfq.weight"} {
		if s, ok := read("blkio", f); ok {
			w, err := parseWeight(s)
			errs = append(errs, err)
			l.IOWeight = w
			break
		}
	}
	if !found && len(errs) == 0 {
		return l, fmt.Errorf("no cpu, cpuset, memory or blkio directory under %s", cgroup.Root)
	}
	return l, errors.Join(errs...)
}

func readLimitsV2(ref cgroup.Ref) (Limits, error) {
	var l Limits
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
