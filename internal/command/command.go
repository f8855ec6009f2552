// Package command is the one place boxbench runs external programs. Every failure carries the
// argv and the tail of the program's output, so an error message alone says what went wrong.
// Arguments are passed as a vector, never through a shell.
//
// Layer (docs/architecture.md): OS plumbing — it talks to the host and imports only leaves;
// the spec and everything above may import it.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Error is a failed external command.
type Error struct {
	Argv   []string
	Output string // combined stdout+stderr tail
	Err    error
}

func (e *Error) Error() string {
	out := strings.TrimSpace(e.Output)
	if out == "" {
		return fmt.Sprintf("%s: %v", strings.Join(e.Argv, " "), e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", strings.Join(e.Argv, " "), e.Err, out)
}

func (e *Error) Unwrap() error { return e.Err }

// TailBytes bounds how much output an Error keeps.
const TailBytes = 2048

// Options adjust one command.
type Options struct {
	Stdin io.Reader
	Dir   string
	Env   []string // appended to the inherited environment
}

// DefaultTimeout bounds a command whose context has no deadline: no external program runs
// unbounded. Callers with a longer job (a rootfs build) give their context a deadline.
const DefaultTimeout = time.Hour

// waitDelay is how long Run waits for the command's output pipes to close after the command
// exited or was killed: a grandchild that escaped the process group and holds stdout cannot
// block Run longer than this.
const waitDelay = 5 * time.Second

// Bound makes cmd (not yet started) run in a process group of its own and, when its context
// ends, kills the whole group (SIGKILL to -pgid), so that a forked grandchild holding a pipe
// dies with it; Wait gives up on the pipes waitDelay after that. The command is killed too
// when boxbench dies (Pdeathsig). Every external program
// boxbench runs goes through Bound, directly (sysbench) or through Run.
func Bound(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// The command dies with boxbench: after a kill -9 of boxbench no copy, mkfs or load
	// generator of it goes on writing into a filesystem that doctor --cleanup must unmount
	// (the signal follows the thread that started the command; Go never ends that thread
	// unless a goroutine locked to it returns, and none that starts commands does). A server
	// that drops privileges loses it, by the kernel's rule, and is killed by its cgroup.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.Cancel = func() error {
		// The group's id is the child's pid (Setpgid with Pgid 0).
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = waitDelay
}

// Run runs argv and returns its standard output. On failure the error is an *Error with
// stderr (or stdout) in it.
func Run(ctx context.Context, argv ...string) ([]byte, error) {
	return RunWith(ctx, Options{}, argv...)
}

// RunWith is Run with options.
func RunWith(ctx context.Context, o Options, argv ...string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("command: empty argv")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	Bound(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin, cmd.Dir = &stdout, &stderr, o.Stdin, o.Dir
	if len(o.Env) > 0 {
		cmd.Env = append(cmd.Environ(), o.Env...)
	}
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success() {
		// The command succeeded but left a process holding its output (a daemon that did
		// not close stdout): its result stands.
		err = nil
	}
	if err != nil {
		if ctx.Err() != nil {
			// Killed because the context ended (Ctrl-C, a timeout): say so, and let callers
			// test for it with errors.Is.
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		out := stderr.Bytes()
		if len(bytes.TrimSpace(out)) == 0 {
			out = stdout.Bytes()
		}
		return stdout.Bytes(), &Error{Argv: argv, Output: Tail(out, TailBytes), Err: err}
	}
	return stdout.Bytes(), nil
}

// Tail returns at most n bytes from the end of b, starting at a line boundary when possible.
func Tail(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	b = b[len(b)-n:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
		b = b[i+1:]
	}
	return string(b)
}

// Exists reports whether name is an executable on PATH.
func Exists(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}
