package hostproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process that ignores SIGTERM is killed with its whole group: a child it forked (in its
// group) does not survive WaitOr.
func TestWaitOrKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	p, err := Start([]string{"sh", "-c", "trap '' TERM; sleep 3000 & echo $! > " + filepath.Join(dir, "pid") + "; wait"}, filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	var child int
	for i := 0; i < 50 && child == 0; i++ {
		b, _ := os.ReadFile(filepath.Join(dir, "pid"))
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(50 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("the child's pid was not written")
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	p.Signal(syscall.SIGTERM)
	if p.WaitOr(200*time.Millisecond, nil) {
		t.Fatal("a process ignoring SIGTERM exited by itself")
	}
	for i := 0; i < 50; i++ {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("child %d of the killed process survived", child)
}
