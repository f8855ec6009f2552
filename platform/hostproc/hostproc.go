// Package hostproc is a server process a platform starts on this host and watches: the native
// server itself, or the monitor of an LXC container (lxc-start -F). Its stdout and stderr go to
// a log file, it runs in a process group of its own (a Ctrl-C at the terminal reaches boxbench,
// which stops boxes in order), and its exit is observable without polling.
package hostproc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/boxbench/boxbench/internal/placement"
)

// Proc is a started process. Its methods may be called from any goroutine.
type Proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts argv in / with stdout and stderr appended to logPath (created).
func Start(argv []string, logPath string) (*Proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &Proc{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// Exited is closed when the process has exited and been reaped.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err says how the process ended (call after Exited is closed).
func (p *Proc) Err() error { return fmt.Errorf("%s", p.cmd.ProcessState) }

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig unless the process has exited.
func (p *Proc) Signal(sig os.Signal) {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// killWait bounds the wait for a killed process to be reaped: a process in uninterruptible
// sleep (D state, a hung disk or NFS) does not die until the kernel lets it, and a teardown
// must not wait for that forever.
const killWait = 10 * time.Second

// WaitOr waits up to timeout for the process to exit; then it kills its process group and
// waits up to killWait more. It returns false when the process had to be killed (or would not
// die: then Exited stays open).
func (p *Proc) WaitOr(timeout time.Duration, done <-chan struct{}) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(timeout):
	case <-done:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) // its own group (Setpgid)
	_ = p.cmd.Process.Kill()
	select {
	case <-p.exited:
	case <-time.After(killWait):
	}
	return false
}

// joinScript writes the shell's own pid into each cgroup.procs file named before "--", puts
// itself under the normal scheduling policy (the client's threads may run under another one,
// placement.clientPolicy, which children would inherit), then execs the rest of its
// arguments. Arguments are positional parameters: nothing is ever interpolated into the script.
const joinScript = `while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; ` +
	`chrt --other --pid 0 $$ || exit 125; exec "$@"`

// InGroup returns argv prefixed so that the process joins the control groups whose cgroup.procs
// files are procs before it execs: it never runs a moment outside them. It runs Unpinned.
func InGroup(procs, argv []string) []string {
	full := append([]string{"/bin/sh", "-c", joinScript, "sh"}, procs...)
	full = append(full, "--")
	return Unpinned(full, argv)
}

// Unpinned returns prefix, then argv prefixed so that it runs on every cpu boxbench was given
// at start (placement.HostCPUs), not only on the client's. A child inherits its parent's
// affinity, boxbench pins itself to placement.client, and the kernel keeps a mask set that way
// when the child later joins a cpuset cgroup (it intersects the two): without this a server
// started natively, in LXC or as a VM would share the client's cpus. A box's own cpuset still
// narrows it.
func Unpinned(prefix, argv []string) []string {
	full := append(append([]string(nil), prefix...), "taskset", "--cpu-list", placement.FormatList(placement.HostCPUs()))
	return append(full, argv...)
}
