package telemetry

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/containerd/cgroups/v3/cgroup1"
	v1stats "github.com/containerd/cgroups/v3/cgroup1/stats"

	"github.com/boxbench/boxbench/internal/cgroup"
)

// newCgroupCollector picks the reader for ref's layout, once: the one place in telemetry that
// knows there are two (each parses its layout's own files; see v1Collector and v2Collector).
func newCgroupCollector(ref cgroup.Ref, rt roots) (collector, error) {
	if ref.Layout() == cgroup.V2 {
		return newV2Collector(ref)
	}
	return newV1Collector(ref, rt)
}

// v1Collector reads a cgroup v1 group through containerd/cgroups' controllers.
//
// Each controller is loaded as its own cgroup1.Cgroup with a one-controller hierarchy rooted at
// cgroup.Root, for two reasons: the library's Stat fails as a whole when one controller fails,
// and we need to know which values are missing; and this host mounts cpu and cpuacct as
// separate hierarchies (/sys/fs/cgroup/cpu, /sys/fs/cgroup/cpuacct), which the library's
// controllers handle (each joins its own name to the root) but which is easy to get wrong with
// a combined "cpu,cpuacct" assumption. A controller whose directory is missing stays nil and
// its values are absent.
type v1Collector struct {
	ref                      cgroup.Ref
	cpu, cpuacct, mem, blkio cgroup1.Cgroup
	swapAccounting           bool
	noSwapDevice             bool   // the host has no swap (SwapTotal 0): nothing can be in swap
	pressureDir              string // directory with cpu/memory/io.pressure, "" if none
	blkioRootFile            string // root group's throttle.io_service_bytes
	blkioActive              bool
}

func newV1Collector(ref cgroup.Ref, rt roots) (*v1Collector, error) {
	root := cgroup.Root
	c := &v1Collector{ref: ref, blkioRootFile: filepath.Join(root, "blkio", "blkio.throttle.io_service_bytes")}
	var err error
	load := func(s cgroup1.Subsystem) cgroup1.Cgroup {
		if err != nil {
			return nil
		}
		var cg cgroup1.Cgroup
		cg, err = loadV1(ref, s)
		return cg
	}
	c.cpu = load(cgroup1.NewCpu(root))
	c.cpuacct = load(cgroup1.NewCpuacct(root))
	// kmem and kmem.tcp are not needed; memsw is read only when swap is accounted.
	c.mem = load(cgroup1.NewMemory(root, cgroup1.IgnoreModules("kmem", "kmem.tcp"), cgroup1.OptionalSwap()))
	c.blkio = load(cgroup1.NewBlkio(root, cgroup1.ProcRoot(rt.proc)))
	if err != nil {
		return nil, fmt.Errorf("load cgroup v1 %s: %w", ref.Path(), err)
	}
	if c.cpu == nil && c.cpuacct == nil && c.mem == nil && c.blkio == nil {
		return nil, fmt.Errorf("cgroup v1 %s: no cpu, cpuacct, memory or blkio directory under %s", ref.Path(), root)
	}
	_, statErr := os.Stat(filepath.Join(ref.Dir("memory"), "memory.memsw.usage_in_bytes"))
	c.swapAccounting = statErr == nil
	// memsw and memory usage are two reads a moment apart: their difference is noise, not swap,
	// on a host that has no swap device at all (a false swap_used warning on every run here).
	if fs, err := procfs.NewFS(rt.proc); err == nil {
		if mi, err := fs.Meminfo(); err == nil && mi.SwapTotal != nil && *mi.SwapTotal == 0 {
			c.noSwapDevice = true
		}
	}
	c.pressureDir = v1PressureDir(ref)
	return c, nil
}

func loadV1(ref cgroup.Ref, s cgroup1.Subsystem) (cgroup1.Cgroup, error) {
	cg, err := cgroup1.Load(cgroup1.StaticPath(ref.Path()), cgroup1.WithHierarchy(func() ([]cgroup1.Subsystem, error) {
		return []cgroup1.Subsystem{s}, nil
	}))
	if errors.Is(err, cgroup1.ErrCgroupDeleted) {
		return nil, nil
	}
	return cg, err
}

// v1PressureDir finds PSI files for a v1 group: on a hybrid host the same path exists in the
// unified (v2) mount, which carries cpu/memory/io.pressure for every group even without
// controllers; a kernel booted with psi v1 support puts them in the cpuacct directory.
func v1PressureDir(ref cgroup.Ref) string {
	for _, d := range []string{ref.Dir("unified"), ref.Dir("cpuacct")} {
		if _, err := os.Stat(filepath.Join(d, "cpu.pressure")); err == nil {
			return d
		}
	}
	return ""
}

func (c *v1Collector) name() string { return "cgroup v1 " + c.ref.Path() }

func (c *v1Collector) collect(r reading) error {
	var errs []error
	if m, err := stat(c.cpu); err != nil {
		errs = append(errs, fmt.Errorf("cpu: %w", err))
	} else if m != nil {
		t := m.CPU.Throttling
		r.set("cpu_periods_total", float64(t.Periods))
		r.set("cpu_throttled_periods_total", float64(t.ThrottledPeriods))
		r.set("cpu_throttled_seconds_total", float64(t.ThrottledTime)/1e9)
	}
	if m, err := stat(c.cpuacct); err != nil {
		errs = append(errs, fmt.Errorf("cpuacct: %w", err))
	} else if m != nil {
		u := m.CPU.Usage
		r.set("cpu_usage_seconds_total", float64(u.Total)/1e9)
		r.set("cpu_user_seconds_total", float64(u.User)/1e9)
		r.set("cpu_system_seconds_total", float64(u.Kernel)/1e9)
	}
	if m, err := stat(c.mem); err != nil {
		errs = append(errs, fmt.Errorf("memory: %w", err))
	} else if m != nil {
		c.memory(r, m)
	}
	if err := c.io(r); err != nil {
		errs = append(errs, fmt.Errorf("blkio: %w", err))
	}
	if c.pressureDir != "" {
		if err := readPressure(r, c.pressureDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func stat(cg cgroup1.Cgroup) (*v1stats.Metrics, error) {
	if cg == nil {
		return nil, nil
	}
	return cg.Stat()
}

func (c *v1Collector) memory(r reading, m *v1stats.Metrics) {
	ms := m.Memory
	r.set("memory_usage_bytes", float64(ms.Usage.Usage))
	ws := float64(ms.Usage.Usage) - float64(ms.TotalInactiveFile)
	r.set("memory_working_set_bytes", max(ws, 0))
	r.set("memory_cache_bytes", float64(ms.TotalCache))
	r.set("memory_rss_bytes", float64(ms.TotalRSS))
	r.set("memory_major_faults_total", float64(ms.TotalPgMajFault))
	r.set("memory_minor_faults_total", float64(ms.TotalPgFault-min(ms.TotalPgFault, ms.TotalPgMajFault)))
	r.set("memory_limit_hits_total", float64(ms.Usage.Failcnt))
	switch {
	case c.noSwapDevice && c.swapAccounting:
		r.set("memory_swap_bytes", 0) // measured: no device to swap to
	case c.swapAccounting:
		// memsw counts memory plus swap.
		r.set("memory_swap_bytes", max(float64(ms.Swap.Usage)-float64(ms.Usage.Usage), 0))
	}
	if m.MemoryOomControl != nil {
		r.set("memory_oom_kills_total", float64(m.MemoryOomControl.OomKill))
	}
}

// io reads block I/O. The v1 blkio.throttle.* counters (the library's fallback when the CFQ
// files are absent, as on every blk-mq kernel) only count once blk-throttle has been activated
// on the device's queue, i.e. after some cgroup set a throttle rule on that device since boot;
// until then every group shows just "Total 0". The root group lists a line per device once
// counting is on, so no device line there means "not counted" and the values are absent.
func (c *v1Collector) io(r reading) error {
	if c.blkio == nil {
		return nil
	}
	if !c.blkioActive {
		f, err := os.Open(c.blkioRootFile)
		if err != nil {
			return nil // no root file: treat as not counted
		}
		active, err := blkioHasDevices(f)
		f.Close()
		if err != nil {
			return err
		}
		if !active {
			return nil
		}
		c.blkioActive = true
	}
	m, err := c.blkio.Stat()
	if err != nil {
		return err
	}
	sum := func(es []*v1stats.BlkIOEntry, op string) float64 {
		var s float64
		for _, e := range es {
			if e.Op == op {
				s += float64(e.Value)
			}
		}
		return s
	}
	b := m.Blkio
	r.set("io_read_bytes_total", sum(b.IoServiceBytesRecursive, "Read"))
	r.set("io_write_bytes_total", sum(b.IoServiceBytesRecursive, "Write"))
	r.set("io_read_ops_total", sum(b.IoServicedRecursive, "Read"))
	r.set("io_write_ops_total", sum(b.IoServicedRecursive, "Write"))
	return nil
}

// blkioHasDevices reports whether a blkio rwstat file has any per-device line
// ("254:0 Read 4096"), as opposed to only the "Total 0" line.
func blkioHasDevices(rd io.Reader) (bool, error) {
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && strings.Contains(f[0], ":") {
			return true, nil
		}
	}
	return false, sc.Err()
}
