package telemetry

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/internal/cgroup"
)

// v2Collector reads a cgroup v2 group with small parsers of its own.
//
// containerd/cgroups' cgroup2.Manager.Stat is not used for sampling because it reports a
// missing file or key as 0 (cpu.stat without the cpu controller gives nr_throttled 0, a group
// without the memory controller gives memory usage 0), and telemetry must keep "not offered"
// apart from a measured zero. The files are read in the kernel's documented formats (flat
// keyed, nested keyed, single value, PSI).
type v2Collector struct {
	ref cgroup.Ref
	dir string
}

func newV2Collector(ref cgroup.Ref) (*v2Collector, error) {
	dir := ref.Dir("")
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		return nil, fmt.Errorf("cgroup v2 %s: %w", ref.Path(), err)
	}
	return &v2Collector{ref: ref, dir: dir}, nil
}

func (c *v2Collector) name() string { return "cgroup v2 " + c.ref.Path() }

func (c *v2Collector) collect(r reading) error {
	var errs []error
	keep := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	cpu, err := readFile(filepath.Join(c.dir, "cpu.stat"), parseFlatKeyed)
	keep(err)
	for k, name := range map[string]string{
		"usage_usec":     "cpu_usage_seconds_total",
		"user_usec":      "cpu_user_seconds_total",
		"system_usec":    "cpu_system_seconds_total",
		"throttled_usec": "cpu_throttled_seconds_total",
	} {
		if v, ok := cpu[k]; ok {
			r.set(name, float64(v)/1e6)
		}
	}
	for k, name := range map[string]string{"nr_periods": "cpu_periods_total", "nr_throttled": "cpu_throttled_periods_total"} {
		if v, ok := cpu[k]; ok {
			r.set(name, float64(v))
		}
	}

	cur, err := readFile(filepath.Join(c.dir, "memory.current"), parseSingle)
	keep(err)
	if err == nil {
		r.set("memory_usage_bytes", float64(cur))
	}
	ms, err := readFile(filepath.Join(c.dir, "memory.stat"), parseFlatKeyed)
	keep(err)
	if v, ok := ms["anon"]; ok {
		r.set("memory_rss_bytes", float64(v))
	}
	if v, ok := ms["file"]; ok {
		r.set("memory_cache_bytes", float64(v))
	}
	if v, ok := ms["pgmajfault"]; ok {
		r.set("memory_major_faults_total", float64(v))
		if all, ok := ms["pgfault"]; ok {
			r.set("memory_minor_faults_total", float64(all-min(all, v)))
		}
	}
	if v, ok := ms["inactive_file"]; ok {
		if cur, ok := r[key{metric: "memory_usage_bytes"}]; ok {
			r.set("memory_working_set_bytes", max(cur-float64(v), 0))
		}
	}
	if v, err := readFile(filepath.Join(c.dir, "memory.swap.current"), parseSingle); err == nil {
		r.set("memory_swap_bytes", float64(v))
	} else {
		keep(err)
	}
	ev, err := readFile(filepath.Join(c.dir, "memory.events"), parseFlatKeyed)
	keep(err)
	if v, ok := ev["max"]; ok {
		r.set("memory_limit_hits_total", float64(v))
	}
	if v, ok := ev["oom_kill"]; ok {
		r.set("memory_oom_kills_total", float64(v))
	}

	ios, err := readFile(filepath.Join(c.dir, "io.stat"), parseIOStat)
	keep(err)
	if err == nil {
		r.set("io_read_bytes_total", float64(ios["rbytes"]))
		r.set("io_write_bytes_total", float64(ios["wbytes"]))
		r.set("io_read_ops_total", float64(ios["rios"]))
		r.set("io_write_ops_total", float64(ios["wios"]))
	}
	keep(readPressure(r, c.dir))
	return errors.Join(errs...)
}

// readFile opens name and parses it; the error keeps fs.ErrNotExist visible to errors.Is.
func readFile[T any](name string, parse func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(name)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		return v, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// parseFlatKeyed reads "key value" lines (cpu.stat, memory.stat, memory.events).
func parseFlatKeyed(rd io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("unexpected line %q", sc.Text())
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", sc.Text(), err)
		}
		out[f[0]] = v
	}
	return out, sc.Err()
}

// parseSingle reads a file holding one unsigned number (memory.current).
func parseSingle(rd io.Reader) (uint64, error) {
	b, err := io.ReadAll(rd)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// parseIOStat reads io.stat ("254:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0") and sums
// each key over all devices.
func parseIOStat(rd io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("unexpected field %q in line %q", kv, sc.Text())
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %q: %w", sc.Text(), err)
			}
			out[k] += n
		}
	}
	return out, sc.Err()
}
