package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestErrorCarriesArgvAndOutput(t *testing.T) {
	_, err := Run(context.Background(), "sh", "-c", "echo boom >&2; exit 3")
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "sh -c") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v", err)
	}
}

func TestCancelledIsDeadlineExceeded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, "sleep", "5")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a command killed by its context: %v, want context.DeadlineExceeded", err)
	}
}

func TestTail(t *testing.T) {
	if got := Tail([]byte("line1\nline2\nline3"), 8); got != "line3" {
		t.Errorf("Tail = %q", got)
	}
}

// pidIn reads the first line of out as a pid.
func pidIn(t *testing.T, out []byte) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]))
	if err != nil || pid <= 1 {
		t.Fatalf("no pid in output %q", out)
	}
	return pid
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// runBounded runs argv with a 300 ms deadline and fails the test if Run has not returned
// within 20 s (a grandchild holding stdout blocked it).
func runBounded(t *testing.T, argv ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() { out, err := Run(ctx, argv...); done <- result{out, err} }()
	select {
	case r := <-done:
		return r.out, r.err
	case <-time.After(20 * time.Second):
		t.Fatalf("%v did not return after its deadline: a grandchild holding stdout blocks it", argv)
		return nil, nil
	}
}

// A command that times out has its whole process group killed: a forked grandchild that holds
// stdout dies with it and does not block Run.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	out, err := runBounded(t, "sh", "-c", "sleep 3000 & echo $!; wait")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want context.DeadlineExceeded, got %v", err)
	}
	pid := pidIn(t, out)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	for i := 0; alive(pid) && i < 50; i++ {
		time.Sleep(100 * time.Millisecond) // reaped by init once killed
	}
	if alive(pid) {
		t.Errorf("grandchild %d survived its command's timeout", pid)
	}
}

// A grandchild that left the process group (setsid) and holds stdout cannot be killed with the
// group; Run still returns, waitDelay after the deadline.
func TestEscapedGrandchildDoesNotBlock(t *testing.T) {
	out, err := runBounded(t, "sh", "-c", "setsid sleep 3000 & echo $!; wait")
	if err == nil {
		t.Fatal("want an error for a command past its deadline")
	}
	pid := pidIn(t, out)
	_ = syscall.Kill(pid, syscall.SIGKILL) // the test's own leftover, by pid
}

// TestCommandDiesWithBoxbench: a command started through Run is killed when the process that
// started it is killed with SIGKILL (no teardown ran): the test runs itself as that process.
func TestCommandDiesWithBoxbench(t *testing.T) {
	if os.Getenv("COMMAND_TEST_PARENT") == "1" {
		_, _ = RunWith(context.Background(), Options{}, "sh", "-c", "echo $$; exec sleep 60")
		return
	}
	if testing.Short() {
		t.Skip("starts processes; -short")
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestCommandDiesWithBoxbench$")
	parent.Env = append(os.Environ(), "COMMAND_TEST_PARENT=1")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	// The child's own output goes to a buffer of the parent: find it among the parent's
	// children instead.
	var child int
	deadline := time.Now().Add(30 * time.Second)
	for child == 0 && time.Now().Before(deadline) {
		var b []byte
		for _, task := range tasksOf(parent.Process.Pid) {
			b = append(b, task...)
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			child, _ = strconv.Atoi(f[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	if child == 0 {
		_ = parent.Process.Kill()
		t.Fatal("the command never started")
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	for time.Now().Before(deadline) {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child)); err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(child, syscall.SIGKILL)
	t.Fatalf("command %d outlived the process that started it", child)
}

// tasksOf lists the children of every thread of pid (a Go program forks from any thread).
func tasksOf(pid int) [][]byte {
	var out [][]byte
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		out = append(out, append(b, ' '))
	}
	return out
}
