// Package command is the one place boxbench runs external programs. Every failure carries the
// argv and the tail of the program's output, so an error message alone says what went wrong.
// Arguments are passed as a vector, never through a shell.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
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
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin, cmd.Dir = &stdout, &stderr, o.Stdin, o.Dir
	if len(o.Env) > 0 {
		cmd.Env = append(cmd.Environ(), o.Env...)
	}
	if err := cmd.Run(); err != nil {
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
