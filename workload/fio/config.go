package fio

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Presets are the named jobs: fio options (as --name=value) on top of ioengine=psync, one
// synchronous I/O per call, as a database issues them. The fsync family is the neighbour of
// the VM-vs-container isolation study: random 4 KiB writes with no fsync, an fsync every 20
// writes, or every 5. wal is a write-ahead log: sequential 8 KiB writes, each followed by
// fdatasync (PostgreSQL's default WAL block; a job map {preset: wal, bs: 16k} changes it).
var Presets = map[string]map[string]string{
	"randread-4k":  {"rw": "randread", "bs": "4k"},
	"randwrite-4k": {"rw": "randwrite", "bs": "4k"},
	"seqwrite-64k": {"rw": "write", "bs": "64k"},
	"wal":          {"rw": "write", "bs": "8k", "fdatasync": "1"},
	"fsync-none":   {"rw": "randwrite", "bs": "4k"},
	"fsync-low":    {"rw": "randwrite", "bs": "4k", "fsync": "20"},
	"fsync-high":   {"rw": "randwrite", "bs": "4k", "fsync": "5"},
}

// baseOptions apply to every job unless the job map overrides them.
var baseOptions = map[string]string{"ioengine": "psync"}

// PresetNames returns the preset names, sorted.
func PresetNames() []string {
	n := make([]string, 0, len(Presets))
	for k := range Presets {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// reserved are fio options a job map may not set, with the field that sets them: boxbench
// owns where fio writes, for how long it runs, and what it prints.
var reserved = map[string]string{
	"name": "the preset name", "directory": "the box's data directory", "filename": "the box's data directory",
	"filename_format": "the box's data directory", "opendir": "the box's data directory",
	"output": "boxbench", "output-format": "boxbench (json+)", "group_reporting": "boxbench (jobs are reported as one)",
	"runtime": "Duration", "timeout": "Duration", "time_based": "Duration", "ramp_time": "Warmup",
	"direct": "Direct", "buffered": "Direct", "numjobs": "Threads", "thread": "boxbench (jobs run as threads so a kill stops them all)",
	"size": "Size", "filesize": "Size",
}

// allowed are the fio job options a job map may set: the presets' options and the common
// ones that shape the I/O pattern. fio runs as root (on the host, for the native platform), so
// this is an allowlist: an option that runs a program (ioengine=exec, exec_prerun), loads code
// (ioengine=external:), reads or writes a file by name (read_iolog, write_iolog, replay_*,
// verify_state_save, cgroup, ioscheduler, …) or changes the host is refused by omission, and
// so is every option fio adds in a later release until it is reviewed. A value passes
// allowedValue as well.
var allowed = map[string]bool{
	"rw": true, "readwrite": true, "rwmixread": true, "rwmixwrite": true,
	"bs": true, "blocksize": true, "bsrange": true, "bssplit": true, "blockalign": true, "ba": true,
	"ioengine": true, "iodepth": true, "iodepth_batch": true, "iodepth_batch_complete": true, "iodepth_low": true,
	"fsync": true, "fdatasync": true, "fsync_on_close": true, "end_fsync": true, "sync": true, "write_barrier": true,
	"invalidate": true, "fadvise_hint": true, "fallocate": true, "overwrite": true, "create_on_open": true,
	"randrepeat": true, "randseed": true, "norandommap": true, "random_distribution": true, "random_generator": true,
	"percentage_random": true, "file_service_type": true, "nrfiles": true, "offset": true, "offset_increment": true,
	"io_size": true, "number_ios": true,
	"rate": true, "rate_iops": true, "rate_min": true, "rate_iops_min": true, "rate_process": true,
	"thinktime": true, "thinktime_blocks": true, "thinktime_spin": true,
	"zero_buffers": true, "refill_buffers": true, "scramble_buffers": true,
	"buffer_compress_percentage": true, "buffer_compress_chunk": true, "dedupe_percentage": true,
}

// engines are the ioengine values allowed: the synchronous and native asynchronous engines. exec,
// external:…, sg, net and the rest either run code, open what the job names, or do not measure
// the storage path.
var engines = []string{"psync", "sync", "libaio", "io_uring", "posixaio"}

// AllowedOptions returns the job map options a job may set, sorted.
func AllowedOptions() []string {
	n := make([]string, 0, len(allowed))
	for k := range allowed {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// valueRe is what an option value may hold: sizes, numbers, percentages, rw modes, lists
// (bsrange 4k-16k, bssplit 4k/50:8k/50, random_distribution zipf:1.2). Nothing that fio would
// read as a path (except bssplit's '/'), an environment variable ($), a second option (=) or
// a line of a job file.
var valueRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:%,+-]*$`)

// allowedValue checks one option's value.
func allowedValue(k, v string) error {
	check := v
	if k == "bssplit" {
		check = strings.ReplaceAll(v, "/", ":") // bssplit's "/" separates a size from its share
	}
	if !valueRe.MatchString(check) {
		return fmt.Errorf("%q is invalid: a value is a size, number, percentage or word of letters, digits and . _ : %% , + - (no '/', '=', '$', spaces or line breaks; not starting with '-')", v)
	}
	if k == "ioengine" && !slices.Contains(engines, v) {
		return fmt.Errorf("%q is invalid: one of %s", v, strings.Join(engines, ", "))
	}
	return checkBound(k, v)
}

// jobField names a job map option in a message; a name that is not a plain word is quoted, so
// that control characters in a hostile spec never reach the terminal.
func jobField(k string) string {
	if plainName.MatchString(k) {
		return "Job." + k
	}
	return "Job." + strconv.Quote(k)
}

var plainName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// CheckJob validates a spec's job value (a preset name or a job map) without the rest of a
// Config, so that the spec can refuse a hostile job before anything is planned.
func CheckJob(job any) error {
	_, _, err := Config{Job: job}.job()
	return err
}

// Config configures one fio workload. Start from DefaultConfig; New validates.
type Config struct {
	// Job is a preset name (a string, one of Presets), or a map of fio job options (option
	// name → string, number or bool). In a map, the key "preset" starts from that preset and
	// the other keys add to or override its options; without it the map is the whole job and
	// must set rw.
	Job any
	// Direct opens the files with O_DIRECT (fio direct=1), bypassing the page cache. Some
	// filesystems refuse it (tmpfs before Linux 6.6, ramfs); Run then returns
	// ErrDirectUnsupported. Without it, reads of a file smaller than memory measure the page
	// cache once it is warm, and writes without fsync measure memory.
	Direct bool
	// Duration is the measured window (fio runtime, time_based).
	Duration time.Duration
	// Warmup is fio's ramp_time: the job runs that long first and fio discards its numbers.
	Warmup time.Duration
	// Threads is the number of jobs (fio numjobs), each on its own file of Size bytes.
	Threads int
	// Size is the size of each job's file in bytes.
	Size int64
}

// DefaultConfig returns the fsync-high preset, buffered, one job on a 256 MiB file, one
// minute measured after ten seconds of ramp.
func DefaultConfig() Config {
	return Config{Job: "fsync-high", Duration: time.Minute, Warmup: 10 * time.Second, Threads: 1, Size: 256 << 20}
}

// Validate returns every problem of c at once (errors.Join), each naming the field, the bad
// value and what is valid.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, v any, valid string) {
		errs = append(errs, fmt.Errorf("%s: %v is invalid: %s", field, v, valid))
	}
	if _, _, err := c.job(); err != nil {
		errs = append(errs, err)
	}
	if c.Duration < time.Second || c.Duration%time.Millisecond != 0 {
		bad("Duration", c.Duration, "must be at least 1s, in whole milliseconds")
	}
	if c.Warmup < 0 || c.Warmup%time.Millisecond != 0 {
		bad("Warmup", c.Warmup, "must not be negative, in whole milliseconds")
	}
	if c.Threads < 1 {
		bad("Threads", c.Threads, "must be at least 1")
	}
	if c.Size < 1<<20 {
		bad("Size", c.Size, "must be at least 1 MiB")
	}
	return errors.Join(errs...)
}

// job resolves Job into a name and fio options (base options, then the preset, then the map).
func (c Config) job() (string, map[string]string, error) {
	opts := map[string]string{}
	for k, v := range baseOptions {
		opts[k] = v
	}
	switch j := c.Job.(type) {
	case string:
		p, ok := Presets[j]
		if !ok {
			return "", nil, fmt.Errorf("%s: %q is invalid: one of %s, or a map of fio options", "Job", j, strings.Join(PresetNames(), ", "))
		}
		for k, v := range p {
			opts[k] = v
		}
		return j, opts, nil
	case map[string]any:
		return jobMap(j, opts)
	case nil:
		return "", nil, fmt.Errorf("%s: missing: one of %s, or a map of fio options", "Job", strings.Join(PresetNames(), ", "))
	default:
		return "", nil, fmt.Errorf("%s: a %T is invalid: a preset name or a map of fio options", "Job", c.Job)
	}
}

func jobMap(j map[string]any, opts map[string]string) (string, map[string]string, error) {
	var errs []error
	name := "custom"
	if p, ok := j["preset"]; ok {
		ps, _ := p.(string)
		preset, ok := Presets[ps]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %q is invalid: one of %s", "Job.preset", fmt.Sprint(p), strings.Join(PresetNames(), ", ")))
		}
		for k, v := range preset {
			opts[k] = v
		}
		name = ps + "-custom"
	}
	keys := make([]string, 0, len(j))
	for k := range j {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == "preset" {
			continue
		}
		if by, ok := reserved[k]; ok {
			errs = append(errs, fmt.Errorf("%s: is set by %s, not by the job map", "Job."+k, by))
			continue
		}
		if !allowed[k] {
			errs = append(errs, fmt.Errorf("%s: is not an allowed fio option (allowed: %s)", jobField(k), strings.Join(AllowedOptions(), ", ")))
			continue
		}
		v, err := optionValue(j[k])
		if err == nil {
			err = allowedValue(k, v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", "Job."+k, err))
			continue
		}
		opts[k] = v
	}
	if _, ok := opts["rw"]; !ok && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: the map sets no rw (and names no preset): fio would read sequentially by default; say so with rw: read", "Job"))
	}
	if len(errs) > 0 {
		return "", nil, errors.Join(errs...)
	}
	return name, opts, nil
}

// optionValue renders one job map value as fio takes it on the command line.
func optionValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		if x == "" || strings.ContainsAny(x, "\n\r\x00") {
			return "", fmt.Errorf("%q is invalid: a non-empty single-line value", x)
		}
		return x, nil
	case bool:
		if x {
			return "1", nil
		}
		return "0", nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10), nil
		}
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	default:
		return "", fmt.Errorf("a %T is invalid: a string, number or bool", v)
	}
}
