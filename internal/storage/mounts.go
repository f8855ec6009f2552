package storage

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxbench/boxbench/internal/command"
)

// Mount is one line of /proc/self/mounts.
type Mount struct {
	Source, Target, FSType, Options string
}

// ParseMounts reads /proc/mounts format.
func ParseMounts(r io.Reader) []Mount {
	var ms []Mount
	s := bufio.NewScanner(r)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 4 {
			continue
		}
		ms = append(ms, Mount{Source: unescape(f[0]), Target: unescape(f[1]), FSType: f[2], Options: f[3]})
	}
	return ms
}

// unescape undoes the octal escapes /proc/mounts uses for spaces and tabs.
func unescape(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

func mounts() []Mount {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return nil
	}
	defer f.Close()
	return ParseMounts(f)
}

// IsMountPoint reports whether path is the target of a mount.
func IsMountPoint(path string) bool {
	path = filepath.Clean(path)
	for _, m := range mounts() {
		if m.Target == path {
			return true
		}
	}
	return false
}

// MountOf returns the mount that holds path (the longest matching target).
func MountOf(path string) (Mount, bool) {
	path = filepath.Clean(path)
	var best Mount
	found := false
	for _, m := range mounts() {
		if path == m.Target || strings.HasPrefix(path, strings.TrimSuffix(m.Target, "/")+"/") || m.Target == "/" {
			if !found || len(m.Target) > len(best.Target) {
				best, found = m, true
			}
		}
	}
	return best, found
}

func describeMount(path string) string {
	m, ok := MountOf(path)
	if !ok {
		return "unknown"
	}
	return m.Source + " on " + m.Target + " type " + m.FSType + " (" + m.Options + ")"
}

// MountedUnder reports whether anything is mounted on a path below dir.
func MountedUnder(dir string) bool {
	dir = filepath.Clean(dir)
	for _, m := range mounts() {
		if strings.HasPrefix(m.Target, dir+"/") {
			return true
		}
	}
	return false
}

// Leftovers unmounts every mount under root and detaches every loop device whose backing file
// is under root. It returns what it removed.
func Leftovers(ctx context.Context, root string, keep func(path string) bool) ([]string, error) {
	root = filepath.Clean(root)
	var done []string
	var firstErr error
	ms := mounts()
	for i := len(ms) - 1; i >= 0; i-- { // newest first: nested mounts before their parents
		t := ms[i].Target
		if !strings.HasPrefix(t, root+"/") || keep(t) {
			continue
		}
		if err := unmount(ctx, t); err != nil && firstErr == nil {
			firstErr = err
		} else if err == nil {
			done = append(done, "mount "+t)
		}
	}
	out, err := command.Run(ctx, "losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE")
	if err != nil {
		return done, firstErr
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[1], root+"/") || keep(f[1]) {
			continue
		}
		if err := detachLoop(ctx, f[0], root); err != nil && firstErr == nil {
			firstErr = err
		} else if err == nil {
			done = append(done, "loop device "+f[0]+" ("+f[1]+")")
		}
	}
	return done, firstErr
}
