package sysbench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/command"
)

// ErrNotInstalled is returned (wrapped) when the sysbench binary is not on PATH.
var ErrNotInstalled = errors.New("sysbench is not installed on this host (apt-get install sysbench)")

// lookPath finds the sysbench binary.
func lookPath() (string, error) {
	p, err := exec.LookPath("sysbench")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotInstalled, err)
	}
	return p, nil
}

// run is one finished sysbench process.
type run struct {
	output  []byte
	started time.Time     // when "Threads started!" was read; zero if never
	begun   time.Time     // when the process was started
	cpu     time.Duration // user+system over its whole life
	life    time.Duration // from begun until it was reaped: the wall time cpu was charged in
}

// runProcess runs argv to completion with stdout and stderr merged, noting when sysbench
// printed "Threads started!" (the origin of its timer: sysbench flushes each log line, so the
// line arrives within microseconds). ctx's end kills the process's group (command.Bound), which is the guard behind sysbench's own --time and --forced-shutdown.
// A failure is a *command.Error carrying argv and sysbench's FATAL lines (or its output's
// tail); the run is returned with whatever was printed.
func runProcess(ctx context.Context, argv []string, env []string) (*run, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(cmd.Environ(), env...)
	}
	command.Bound(cmd) // its own process group, killed whole when ctx ends
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sysbench: pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	r := &run{begun: time.Now()}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, &command.Error{Argv: argv, Err: err}
	}
	pw.Close() // the child holds its own copy; EOF comes when it exits
	var buf bytes.Buffer
	br := bufio.NewReader(pr)
	for {
		line, err := br.ReadString('\n')
		if r.started.IsZero() && strings.TrimSpace(line) == "Threads started!" {
			r.started = time.Now()
		}
		buf.WriteString(line)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				buf.WriteString("\n(reading sysbench output: " + err.Error() + ")\n")
			}
			break
		}
	}
	pr.Close()
	waitErr := cmd.Wait()
	r.life = time.Since(r.begun)
	r.output = buf.Bytes()
	if cmd.ProcessState != nil {
		r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if waitErr != nil {
		return r, &command.Error{Argv: argv, Output: failureOutput(r.output), Err: waitErr}
	}
	return r, nil
}

// failureOutput returns sysbench's FATAL lines if it printed any (they say what went wrong),
// else the output's tail.
func failureOutput(out []byte) string {
	var fatal []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "FATAL: ") {
			fatal = append(fatal, l)
		}
	}
	if len(fatal) > 0 {
		return command.Tail([]byte(strings.Join(fatal, "\n")), command.TailBytes)
	}
	return command.Tail(out, command.TailBytes)
}
