package docker

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/boxbench/boxbench/cgroup"
)

// CgroupOf finds the control group of a process from /proc/<pid>/cgroup rather than assuming
// the engine's layout (cgroupfs or systemd driver, v1 or v2, a podman scope).
func CgroupOf(pid int) (cgroup.Ref, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return cgroup.Ref{}, fmt.Errorf("find the container's cgroup: %w", err)
	}
	defer f.Close()
	v := cgroup.HostVersion()
	path, err := parseProcCgroup(f, v)
	if err != nil {
		return cgroup.Ref{}, fmt.Errorf("find the cgroup of pid %d: %w", pid, err)
	}
	return cgroup.Ref{Version: v, Path: path}, nil
}

// parseProcCgroup returns the group path in a /proc/<pid>/cgroup file: on v1 (and hybrid) the
// memory controller's hierarchy, on v2 the unified one ("0::/path").
func parseProcCgroup(r io.Reader, v cgroup.Version) (string, error) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		f := strings.SplitN(s.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		if v == cgroup.V2 {
			if f[0] == "0" && f[1] == "" {
				return f[2], nil
			}
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				return f[2], nil
			}
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no %s entry", map[cgroup.Version]string{cgroup.V1: "memory controller", cgroup.V2: "unified (0::)"}[v])
}

// readFile returns a control file of a group, trimmed ("?" when it cannot be read: the value is
// only recorded).
func readFile(dir, name string) string {
	b, err := os.ReadFile(dir + "/" + name)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
