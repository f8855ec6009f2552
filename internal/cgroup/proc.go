package cgroup

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// OfProcess finds the control group of process pid from /proc/<pid>/cgroup rather than
// assuming an engine's layout (cgroupfs or systemd driver, v1 or v2, a podman scope, a kubelet's
// pod groups): on v1 (and hybrid) the memory controller's hierarchy, on v2 the unified one.
func OfProcess(pid int) (Ref, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return Ref{}, fmt.Errorf("find the cgroup of pid %d: %w", pid, err)
	}
	defer f.Close()
	v := HostVersion()
	path, err := parseProcCgroup(f, v)
	if err != nil {
		return Ref{}, fmt.Errorf("find the cgroup of pid %d: %w", pid, err)
	}
	return On(v, path), nil
}

// parseProcCgroup returns the group path in a /proc/<pid>/cgroup file: on v1 (and hybrid) the
// memory controller's hierarchy, on v2 the unified one ("0::/path").
func parseProcCgroup(r io.Reader, v Version) (string, error) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		f := strings.SplitN(s.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		if v == V2 {
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
	return "", fmt.Errorf("no %s entry", map[Version]string{V1: "memory controller", V2: "unified (0::)"}[v])
}
