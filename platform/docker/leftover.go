package docker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killStray kills processes a removed container left behind: some runtimes (gVisor's runsc on
// a host where it cannot start) leave their sandbox and gofer processes running after the engine
// has forgotten the container. They are recognised by the container's full id (64 hex digits,
// unique) in their command line, so nothing else is ever signalled. It returns their pids.
func killStray(id string) []int {
	if len(id) != 64 {
		return nil
	}
	var pids []int
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(raw), id) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			pids = append(pids, pid)
		}
	}
	for i := 0; i < 50 && len(pids) > 0 && anyAlive(pids); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	return pids
}

func anyAlive(pids []int) bool {
	for _, p := range pids {
		if syscall.Kill(p, 0) == nil {
			return true
		}
	}
	return false
}
