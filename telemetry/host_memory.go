package telemetry

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// hostMemory reads host memory and swap from /proc/meminfo (prometheus/procfs) and swap
// traffic and major faults from /proc/vmstat (procfs has no parser for it).
type hostMemory struct {
	fs     procfs.FS
	vmstat string
}

func (hostMemory) name() string { return "host memory" }

func (c hostMemory) collect(r reading) error {
	mi, err := c.fs.Meminfo()
	if err != nil {
		return err
	}
	set := func(name string, v *uint64) {
		if v != nil {
			r.set(name, float64(*v))
		}
	}
	set("memory_total_bytes", mi.MemTotalBytes)
	set("memory_available_bytes", mi.MemAvailableBytes)
	set("memory_cached_bytes", mi.CachedBytes)
	set("memory_buffers_bytes", mi.BuffersBytes)
	set("memory_dirty_bytes", mi.DirtyBytes)
	if mi.MemTotalBytes != nil && mi.MemAvailableBytes != nil {
		r.set("memory_used_bytes", float64(*mi.MemTotalBytes)-float64(*mi.MemAvailableBytes))
	}
	set("swap_total_bytes", mi.SwapTotalBytes)
	if mi.SwapTotalBytes != nil && mi.SwapFreeBytes != nil {
		r.set("swap_used_bytes", float64(*mi.SwapTotalBytes)-float64(*mi.SwapFreeBytes))
	}

	f, err := os.Open(c.vmstat)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	vm, err := parseVMStat(f)
	if err != nil {
		return fmt.Errorf("%s: %w", c.vmstat, err)
	}
	page := float64(os.Getpagesize())
	if v, ok := vm["pswpin"]; ok {
		r.set("swap_in_bytes_total", float64(v)*page)
	}
	if v, ok := vm["pswpout"]; ok {
		r.set("swap_out_bytes_total", float64(v)*page)
	}
	if v, ok := vm["pgmajfault"]; ok {
		r.set("memory_major_faults_total", float64(v))
	}
	return nil
}

// parseVMStat reads /proc/vmstat ("name value" per line).
func parseVMStat(rd io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", sc.Text(), err)
		}
		out[name] = v
	}
	return out, sc.Err()
}
