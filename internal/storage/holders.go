package storage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/command"
)

// A detached loop device stays attached while anything still uses its filesystem. On a host
// whose mounts are private (no systemd: `findmnt -o PROPAGATION /` says private), the holder
// that outlives boxbench's own unmount is a mount namespace cloned while the filesystem was
// mounted (`unshare -m`, `ip netns exec`, a debootstrap under unshare, a container runtime's
// child before its pivot_root): it keeps its own copy of the mount, and an unmount on the host
// does not propagate to it. Such a copy lives as long as that namespace, minutes or hours.

// holder is one thing that keeps a loop device's filesystem or the device itself in use.
type holder struct {
	pid  int
	comm string
	what string // "mount /x in mount namespace mnt:[N]", "open file /x", "working directory"
	// For a copy of the mount in another mount namespace whose root is the host's: the mount
	// point there (under the caller's root), which releaseCopies may unmount.
	copyOf string
	ns     uint64
}

func (h holder) String() string {
	return fmt.Sprintf("pid %d (%s): %s", h.pid, h.comm, h.what)
}

// devNumber is the loop device's major:minor as /proc/*/mountinfo writes it.
func devNumber(dev string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "dev"))
	return strings.TrimSpace(string(b)), err
}

// holdersOf scans every process for what uses the filesystem on device majmin (its mounts in
// other mount namespaces, open files, working and root directories) or the device node itself.
// A copy's mount point is recorded for release only when it is under root and the process's
// root directory is the host's (so that the path means in its namespace what it means here).
func holdersOf(majmin, root string) []holder {
	maj, min, ok := parseMajMin(majmin)
	if !ok {
		return nil
	}
	want := unix.Mkdev(maj, min)
	var hostRoot syscall.Stat_t
	_ = syscall.Stat("/", &hostRoot)
	selfNS := mountNS(os.Getpid())
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	var hs []holder
	seenNS := map[uint64]bool{selfNS: true} // one process names a namespace's mounts
	for _, p := range procs {
		comm, _ := p.Comm()
		add := func(what string) { hs = append(hs, holder{pid: p.PID, comm: comm, what: what}) }
		if ns := mountNS(p.PID); ns != 0 && !seenNS[ns] {
			seenNS[ns] = true
			ms, _ := procfs.GetProcMounts(p.PID)
			sameRoot := sameFile(filepath.Join("/proc", strconv.Itoa(p.PID), "root"), &hostRoot)
			for _, m := range ms {
				if m.MajorMinorVer != majmin {
					continue
				}
				mp := unescape(m.MountPoint)
				h := holder{pid: p.PID, comm: comm, ns: ns,
					what: fmt.Sprintf("mount %s in mount namespace mnt:[%d]", mp, ns)}
				if sameRoot && strings.HasPrefix(mp, root+"/") {
					h.copyOf = mp
				}
				hs = append(hs, h)
			}
		}
		dir := filepath.Join("/proc", strconv.Itoa(p.PID))
		for _, link := range []string{"cwd", "root"} {
			if onDevice(filepath.Join(dir, link), want) {
				add(link + " on it")
			}
		}
		fds, _ := os.ReadDir(filepath.Join(dir, "fd"))
		for _, fd := range fds {
			if onDevice(filepath.Join(dir, "fd", fd.Name()), want) {
				target, _ := os.Readlink(filepath.Join(dir, "fd", fd.Name()))
				add("open file " + target)
			}
		}
	}
	return hs
}

func parseMajMin(s string) (uint32, uint32, bool) {
	a, b, ok := strings.Cut(s, ":")
	maj, err1 := strconv.ParseUint(a, 10, 32)
	min, err2 := strconv.ParseUint(b, 10, 32)
	return uint32(maj), uint32(min), ok && err1 == nil && err2 == nil
}

// mountNS is the inode of pid's mount namespace (what `mnt:[N]` names), 0 when it cannot be
// read (the process is gone).
func mountNS(pid int) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(filepath.Join("/proc", strconv.Itoa(pid), "ns", "mnt"), &st) != nil {
		return 0
	}
	return st.Ino
}

// onDevice reports whether path (a /proc link, followed) is a file on device dev or is that
// device's node.
func onDevice(path string, dev uint64) bool {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return false
	}
	return uint64(st.Dev) == dev || (st.Mode&syscall.S_IFMT == syscall.S_IFBLK && uint64(st.Rdev) == dev)
}

func sameFile(path string, st *syscall.Stat_t) bool {
	var o syscall.Stat_t
	return syscall.Stat(path, &o) == nil && o.Dev == st.Dev && o.Ino == st.Ino
}

// releaseCopies lazily unmounts, in each other mount namespace that holds one, the copies of
// the filesystem on dev that holdersOf found under root, once dev is known to be boxbench's
// own (isOwnLoop). It never signals the holding process: the namespace lives on without the
// mount. It returns what it released.
func releaseCopies(ctx context.Context, hs []holder) []string {
	umount, err := exec.LookPath("umount")
	if err != nil {
		return nil
	}
	var done []string
	for _, h := range hs {
		if h.copyOf == "" || mountNS(h.pid) != h.ns { // gone, or its pid reused
			continue
		}
		// The host's umount binary: the holder's root is the host's (holdersOf checked).
		argv := []string{"nsenter", "--mount=/proc/" + strconv.Itoa(h.pid) + "/ns/mnt", umount, "-l", h.copyOf}
		if _, err := command.Run(ctx, argv...); err == nil {
			done = append(done, h.String())
		}
	}
	return done
}

// isOwnLoop reports whether loop device dev is one boxbench made under root: its backing file
// is boxbench-disk.img under root, and its filesystem is labelled boxbench. Only then does
// boxbench unmount copies of it in other mount namespaces.
func isOwnLoop(ctx context.Context, dev, root string) bool {
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file"))
	if err != nil {
		return false
	}
	back := strings.TrimSpace(string(b))
	if filepath.Base(back) != "boxbench-disk.img" || !strings.HasPrefix(back, filepath.Clean(root)+"/") {
		return false
	}
	kv, err := probe(ctx, dev)
	return err == nil && kv["LABEL"] == "boxbench"
}
