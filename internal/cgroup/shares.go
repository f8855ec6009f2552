package cgroup

import (
	"errors"
	"fmt"
	"github.com/boxbench/boxbench/internal/resource"
	"os"
	"strconv"
	"strings"
)

// accountingBps is a throttle far above any real rate. On cgroup v1 the blkio throttle
// counters of a group stay empty until a rule exists for the device; this rule makes them count
// without limiting anything.
const accountingBps = 1 << 50

// ApplyShares writes the weights and I/O limits of s (I/O limits on device "major:minor", the
// data directory's block device; "" when it has none) into the group's files and returns what it did, control by control, in
// words for the run's facts. A control this host cannot enforce is not an error: it is reported
// (e.g. io weights without the BFQ scheduler) so the run can carry a warning.
func (ref Ref) ApplyShares(s resource.Limits, device string) (map[string]string, error) {
	done := map[string]string{}
	var errs []error
	write := func(ctrl, file, value string) bool {
		path := ref.Dir(ctrl) + "/" + file
		if err := os.WriteFile(path, []byte(value), 0); err != nil {
			errs = append(errs, fmt.Errorf("write %q to %s: %w", value, path, err))
			return false
		}
		return true
	}
	exists := func(ctrl, file string) bool {
		_, err := os.Stat(ref.Dir(ctrl) + "/" + file)
		return err == nil
	}
	if s.CPUWeight > 0 {
		if ref.v == V2 {
			if write("", "cpu.weight", strconv.Itoa(s.CPUWeight)) {
				done["cpu_weight"] = "cpu.weight " + strconv.Itoa(s.CPUWeight)
			}
		} else {
			shares := SharesOf(s.CPUWeight)
			if write("cpu", "cpu.shares", strconv.Itoa(shares)) {
				done["cpu_weight"] = fmt.Sprintf("cpu.shares %d (weight %d)", shares, s.CPUWeight)
			}
		}
	}
	if s.IOWeight > 0 {
		done["io_weight"] = applyIOWeight(ref, s.IOWeight, exists, write)
		// A weight file can exist (the bfq module is loaded) while the device is scheduled by
		// something else, and then the weight is written but ignored.
		if sched := Scheduler(device); !strings.HasPrefix(done["io_weight"], "not ") && sched != "bfq" {
			done["io_weight"] = fmt.Sprintf("not enforced: %s was written, but the device %s is scheduled by %q, not bfq, which ignores weights (enable with: echo bfq > /sys/dev/block/%s/queue/scheduler)",
				done["io_weight"], device, sched, device)
		}
	}
	if device == "" {
		if s.HasIOMax() {
			done["io_max"] = "not applied: the data directory has no block device (tmpfs)"
		}
		return done, errors.Join(errs...)
	}
	if ref.v == V2 {
		var kv []string
		for k, v := range map[string]int64{"rbps": s.ReadBps, "wbps": s.WriteBps, "riops": s.ReadIOPS, "wiops": s.WriteIOPS} {
			if v > 0 {
				kv = append(kv, k+"="+strconv.FormatInt(v, 10))
			}
		}
		if len(kv) > 0 && write("", "io.max", device+" "+strings.Join(kv, " ")) {
			done["io_max"] = "io.max " + device + " " + strings.Join(kv, " ")
		}
		return done, errors.Join(errs...)
	}
	rules := map[string]int64{"blkio.throttle.read_bps_device": s.ReadBps, "blkio.throttle.write_bps_device": s.WriteBps,
		"blkio.throttle.read_iops_device": s.ReadIOPS, "blkio.throttle.write_iops_device": s.WriteIOPS}
	var applied []string
	for file, v := range rules {
		if v > 0 && write("blkio", file, fmt.Sprintf("%s %d", device, v)) {
			applied = append(applied, fmt.Sprintf("%s %s %d", file, device, v))
		}
	}
	if len(applied) > 0 {
		done["io_max"] = strings.Join(applied, "; ")
	} else if write("blkio", "blkio.throttle.read_bps_device", fmt.Sprintf("%s %d", device, int64(accountingBps))) {
		done["io_accounting"] = fmt.Sprintf("enabled with a read throttle of 2^50 B/s on %s (counts I/O, limits nothing)", device)
	}
	return done, errors.Join(errs...)
}

// applyIOWeight sets a proportional I/O weight where the kernel offers one. On v1 that needs
// the BFQ scheduler on the device (blkio.bfq.weight) or the legacy CFQ file (blkio.weight).
func applyIOWeight(ref Ref, w int, exists func(string, string) bool, write func(string, string, string) bool) string {
	if ref.v == V2 {
		if !exists("", "io.weight") {
			return "not enforced: no io.weight (the io controller is not enabled for this group, or the device's scheduler is not BFQ)"
		}
		if write("", "io.weight", "default "+strconv.Itoa(w)) {
			return "io.weight default " + strconv.Itoa(w)
		}
		return "not enforced: io.weight could not be written"
	}
	v1 := min(1000, max(10, w*5))
	for _, file := range []string{"blkio.bfq.weight", "blkio.weight"} {
		if exists("blkio", file) {
			if write("blkio", file, strconv.Itoa(v1)) {
				return fmt.Sprintf("%s %d (weight %d)", file, v1, w)
			}
		}
	}
	return "not enforced: this kernel offers no blkio.weight or blkio.bfq.weight (proportional I/O needs the BFQ scheduler on the device; see boxbench doctor)"
}

// Scheduler returns the active I/O scheduler of the block device "major:minor" (the bracketed
// entry of queue/scheduler; a partition's is its disk's), or "unknown".
func Scheduler(dev string) string {
	if dev == "" {
		return "none (no block device)"
	}
	for _, p := range []string{"/sys/dev/block/" + dev + "/queue/scheduler", "/sys/dev/block/" + dev + "/../queue/scheduler"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if strings.HasPrefix(f, "[") {
				return strings.Trim(f, "[]")
			}
		}
		return strings.TrimSpace(string(b))
	}
	return "unknown"
}

// DeviceOf returns "major:minor" of the block device holding dir, or "" when it has none.
func DeviceOf(major, minor uint32) string {
	if major == 0 && minor == 0 {
		return ""
	}
	return fmt.Sprintf("%d:%d", major, minor)
}
