package docker

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestKillStray starts a process whose command line holds a container id and checks that only
// it is killed.
func TestKillStray(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	// tail keeps following /dev/null after complaining about the missing second file.
	mine := exec.Command("tail", "-f", "/dev/null", "/nonexistent/"+id)
	other := exec.Command("tail", "-f", "/dev/null", "/nonexistent/"+strings.Replace(id, "0", "f", 1))
	for _, c := range []*exec.Cmd{mine, other} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = c.Wait() }()
	}
	defer func() { _ = other.Process.Kill() }()
	pids := killStray(id)
	if len(pids) != 1 || pids[0] != mine.Process.Pid {
		t.Errorf("killed %v, want [%d]", pids, mine.Process.Pid)
	}
	if syscall.Kill(other.Process.Pid, 0) != nil {
		t.Error("an unrelated process was killed")
	}
}
