package platformtest

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/storage"
)

// HostLeftovers lists what of experiment exp is left on this host in boxbench's own places:
// its control groups (/boxbench/<exp> in any hierarchy, with the processes in them), mounts
// and entries under workRoot/<exp>. Platforms add what they own (containers, bridges …).
func HostLeftovers(workRoot, exp string) []string {
	var left []string
	for _, r := range cgroup.At("/boxbench/" + exp).Dirs() {
		if _, err := os.Stat(r); err == nil {
			left = append(left, "cgroup "+r)
			if b, err := os.ReadFile(filepath.Join(r, "cgroup.procs")); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				left = append(left, "processes "+strings.Join(strings.Fields(string(b)), ","))
			}
		}
	}
	dir := filepath.Join(workRoot, exp)
	if b, err := os.ReadFile("/proc/self/mounts"); err == nil {
		for _, m := range storage.ParseMounts(strings.NewReader(string(b))) {
			if strings.HasPrefix(m.Target, dir+"/") {
				left = append(left, "mount "+m.Target)
			}
		}
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		left = append(left, "work directory entries under "+dir)
	}
	return left
}
