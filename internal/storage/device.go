package storage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/command"
)

// ErrDeviceRefused wraps every reason a named device is not formatted.
var ErrDeviceRefused = errors.New("device refused")

// DeviceCheck is what CheckDevice found about a named device.
type DeviceCheck struct {
	Path      string // the device as named
	Real      string // after symbolic links (/dev/disk/by-id/… → /dev/sdb)
	Name      string // kernel name (sdb, nvme0n1p2, loop3)
	Signature string // what blkid found on it ("" when nothing)
}

// facts renders the decision for a Dir's Facts.
func (c DeviceCheck) facts() map[string]string {
	sig, decision := "none", "formatted: a block device, not mounted, not used as swap, no holders, not under / or the protected paths, no signature"
	if c.Signature != "" {
		sig = c.Signature
		decision = "formatted with wipe: true: a block device, not mounted, not used as swap, no holders, not under / or the protected paths; its signature was erased"
	}
	return map[string]string{"device_check": decision, "device_signature": sig, "device_real": c.Real}
}

// CheckDevice decides whether dev may be reformatted. It refuses (an error wrapping
// ErrDeviceRefused, naming the device and the reason) a path outside /dev, anything that is not
// a block device, a device that is mounted or used as swap (itself or one of its partitions), a
// device with holders (an LVM, RAID or device-mapper member), the device (or the whole disk of
// the device) holding /, or any of protect, and — unless wipe — a device with any filesystem,
// RAID or partition-table signature. It changes nothing.
func CheckDevice(ctx context.Context, dev string, protect []string, wipe bool) (DeviceCheck, error) {
	c := DeviceCheck{Path: dev}
	refuse := func(format string, a ...any) (DeviceCheck, error) {
		return c, fmt.Errorf("%w: storageOptions.blockdev.device %q: %s", ErrDeviceRefused, dev, fmt.Sprintf(format, a...))
	}
	if !filepath.IsAbs(dev) || filepath.Clean(dev) != dev || !strings.HasPrefix(dev, "/dev/") {
		return refuse("not an absolute path under /dev (valid: e.g. /dev/sdb, /dev/nvme1n1p2)")
	}
	real, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return refuse("%v", err)
	}
	c.Real = real
	if !strings.HasPrefix(real, "/dev/") {
		return refuse("resolves to %s, outside /dev", real)
	}
	var st unix.Stat_t
	if err := unix.Stat(real, &st); err != nil {
		return refuse("%v", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return refuse("%s is not a block device (valid: a whole disk or a partition)", real)
	}
	mm := fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	sys, err := filepath.EvalSymlinks("/sys/dev/block/" + mm)
	if err != nil {
		return refuse("%s (%s) is not a disk or partition the kernel lists: %v", real, mm, err)
	}
	c.Name = filepath.Base(sys)
	// The device and its partitions: any of them in use makes the device in use.
	family := map[string]string{mm: c.Name} // maj:min → name
	parts, _ := filepath.Glob(filepath.Join(sys, c.Name+"*", "dev"))
	for _, p := range parts {
		if b, err := os.ReadFile(p); err == nil {
			family[strings.TrimSpace(string(b))] = filepath.Base(filepath.Dir(p))
		}
	}
	disk := "" // the whole disk when dev is a partition
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(sys), "dev")); err == nil {
			disk = strings.TrimSpace(string(b))
		}
	}
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		used := mountedDevices(f)
		f.Close()
		for _, m := range sortedKeys(family) {
			if at, ok := used[m]; ok {
				return refuse("%s is mounted on %s (valid: an unmounted device; umount it first)", family[m], at)
			}
		}
	}
	if f, err := os.Open("/proc/swaps"); err == nil {
		swaps := swapDevices(f)
		f.Close()
		for _, s := range swaps {
			if r, err := filepath.EvalSymlinks(s); err == nil && r == real || s == real {
				return refuse("%s is in use as swap", s)
			}
		}
	}
	for _, m := range sortedKeys(family) {
		n := family[m]
		holders, _ := os.ReadDir(filepath.Join("/sys/class/block", n, "holders"))
		if len(holders) > 0 {
			var hs []string
			for _, h := range holders {
				hs = append(hs, h.Name())
			}
			return refuse("%s is held by %s (an LVM, RAID or device-mapper member)", n, strings.Join(hs, ", "))
		}
	}
	for _, p := range append([]string{"/"}, protect...) {
		for _, d := range devicesUnder(p) {
			if _, ok := family[d]; ok || d == disk && disk != "" {
				if d == disk {
					return refuse("it is a partition of the disk that holds %s", p)
				}
				return refuse("it holds %s (valid: a device that holds neither /, the work root nor the results)", p)
			}
		}
	}
	c.Signature, err = signature(ctx, real)
	if err != nil {
		return refuse("cannot tell whether it holds data: %v", err)
	}
	if c.Signature != "" && !wipe {
		return refuse("it holds %s; set storageOptions.blockdev.wipe: true to agree to lose it", c.Signature)
	}
	return c, nil
}

// devicesUnder returns the maj:min of the filesystem holding path and of the block device its
// mount names as source (they differ for btrfs and overlay-like filesystems).
func devicesUnder(path string) []string {
	var out []string
	var st unix.Stat_t
	if unix.Stat(path, &st) == nil {
		out = append(out, fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	}
	if m, ok := MountOf(path); ok && strings.HasPrefix(m.Source, "/dev/") {
		var sst unix.Stat_t
		if unix.Stat(m.Source, &sst) == nil && sst.Mode&unix.S_IFMT == unix.S_IFBLK {
			out = append(out, fmt.Sprintf("%d:%d", unix.Major(sst.Rdev), unix.Minor(sst.Rdev)))
		}
	}
	return out
}

// signature runs blkid in low-level probe mode: filesystems, RAID members and partition tables.
// Exit status 2 means nothing was found.
func signature(ctx context.Context, dev string) (string, error) {
	kv, err := probe(ctx, dev)
	if err != nil || kv == nil {
		return "", err
	}
	var parts []string
	for _, k := range []string{"TYPE", "PTTYPE", "USAGE", "LABEL", "UUID"} {
		if v := kv[k]; v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	if len(parts) == 0 {
		return "an unrecognised signature", nil
	}
	return "a signature (" + strings.Join(parts, " ") + ")", nil
}

// probe is blkid's low-level probe of dev as KEY=value pairs (TYPE, LABEL, UUID…); empty when
// blkid found nothing (exit status 2).
func probe(ctx context.Context, dev string) (map[string]string, error) {
	out, err := command.Run(ctx, "blkid", "-p", "-o", "export", dev)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	return kv, nil
}

// mountedDevices reads /proc/self/mountinfo: maj:min → mount point.
func mountedDevices(r io.Reader) map[string]string {
	out := map[string]string{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) >= 5 {
			if _, seen := out[f[2]]; !seen {
				out[f[2]] = unescape(f[4])
			}
		}
	}
	return out
}

// swapDevices reads /proc/swaps.
func swapDevices(r io.Reader) []string {
	var out []string
	s := bufio.NewScanner(r)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) > 0 && f[0] != "Filename" {
			out = append(out, unescape(f[0]))
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}
