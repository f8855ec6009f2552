package spec

import (
	"fmt"
	"math"
	"strconv"

	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/internal/resource"
)

// LimitKeys are the matrix keys that vary a box's resources: a scaling study (cpus: [0.5, 1, 2])
// or a known effect injected to see whether the measurement resolves it. Each replaces the
// field of the same name under limits: for the cells that have it.
var LimitKeys = []string{"cpus", "cpuset", "memory", "cpuWeight", "ioWeight"}

// setLimit applies one limit key's matrix value to l. The error says what is valid.
func setLimit(l *resource.Limits, key, v string) error {
	switch key {
	case "cpus":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < MinCPUs || f > MaxCPUs {
			return fmt.Errorf("%q is not a CPU count (valid: %g to %d cores, e.g. 0.5)", v, MinCPUs, MaxCPUs)
		}
		l.CPUs = f
	case "cpuset":
		if _, err := placement.ParseList(v); err != nil {
			return err
		}
		l.Cpuset = v
	case "memory":
		b, err := ParseBytes(v)
		if err != nil {
			return err
		}
		if b < 64<<20 {
			return fmt.Errorf("%s is too small for a database (valid: 64MiB to %s)", v, FormatBytes(MaxBytes))
		}
		if b > MaxBytes {
			return fmt.Errorf("%s is too large (valid: 64MiB to %s)", v, FormatBytes(MaxBytes))
		}
		l.MemoryBytes = b
	case "cpuWeight", "ioWeight":
		w, err := strconv.Atoi(v)
		if err != nil || w < 1 || w > 10000 {
			return fmt.Errorf("%q is not a weight (valid: 1 to 10000, cgroup v2's scale; 100 is the default)", v)
		}
		if key == "cpuWeight" {
			l.CPUWeight = w
		} else {
			l.IOWeight = w
		}
	default:
		return fmt.Errorf("%q is not a limit key (valid: %v)", key, LimitKeys)
	}
	return nil
}

// ResourcesOf returns the resources of a cell with matrix parameters params: limits: with the
// cell's limit keys applied. The values were validated by Parse.
func (e *Experiment) ResourcesOf(params map[string]string) resource.Limits {
	l := e.Limits.Resources()
	for _, k := range LimitKeys {
		if v, ok := params[k]; ok {
			_ = setLimit(&l, k, v)
		}
	}
	return l
}
