package hostproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/placement"
	"github.com/boxbench/boxbench/testkit/testenv"
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

// A server started while boxbench is pinned to the client's cpus runs on every cpu boxbench
// was given (a child would inherit the pin, and the kernel keeps it across a cpuset).
func TestServerNotPinnedWithTheClient(t *testing.T) {
	host := placement.HostCPUs()
	if len(host) < 2 {
		testenv.Skip(t, "needs 2 cpus to tell the client's pin from the host's")
	}
	defer func() { _, _ = placement.Pin(placement.FormatList(host)) }()
	if _, err := placement.Pin(strconv.Itoa(host[0])); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	p, err := Start(InGroup(nil, []string{"grep", "Cpus_allowed_list", "/proc/self/status"}), log)
	if err != nil {
		t.Fatal(err)
	}
	if !p.WaitOr(10*time.Second, nil) {
		t.Fatal("did not exit")
	}
	b, _ := os.ReadFile(log)
	got, err := placement.ParseList(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "Cpus_allowed_list:")))
	if err != nil || placement.FormatList(got) != placement.FormatList(host) {
		t.Errorf("the server's cpus %q (%v), want the host's %s", b, err, placement.FormatList(host))
	}
}
