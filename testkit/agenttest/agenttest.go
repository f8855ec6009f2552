// Package agenttest runs the agent as a child process of a test: a process boundary like a
// container's or a pod's, without either. A test package calls ServeIfChild first thing in its
// TestMain, and uses Self as its box's client site. Import it from tests only.
package agenttest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/boxbench/boxbench/agent"
	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/driver"
)

const childEnv = "BOXBENCH_AGENTTEST_CHILD"

// ServeIfChild makes the test binary serve as the agent (and exit) when it was started by a
// Site; otherwise it returns at once.
func ServeIfChild() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	if err := agent.Serve(context.Background(), os.Stdin, os.Stdout, builtin.Workload, slog.New(slog.NewTextHandler(os.Stderr, nil))); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command is the argv and extra environment that start the test binary as the agent (for
// runner.Config.Agent).
func Command() (argv, env []string) { return []string{os.Args[0]}, []string{childEnv + "=1"} }

// Site is a platform.ClientSite whose agent is the test binary itself.
type Site struct {
	Where  string
	Server driver.Endpoint
	mu     sync.Mutex
	stderr bytes.Buffer
}

// Self returns a site reaching the server at ep.
func Self(ep driver.Endpoint) *Site { return &Site{Where: "a child process", Server: ep} }

func (s *Site) ClientPlace() (string, driver.Endpoint) { return s.Where, s.Server }

// ClientCPUs: the child process is not pinned.
func (s *Site) ClientCPUs() string { return "" }

func (s *Site) RunAgent(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	argv, env := Command()
	cmd := exec.CommandContext(ctx, argv[0])
	cmd.Env = append(os.Environ(), env...)
	var errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, &errb
	err := cmd.Run()
	s.mu.Lock()
	s.stderr.Write(errb.Bytes())
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(errb.String()))
	}
	return nil
}

// Stderr is everything the site's agents wrote on standard error so far.
func (s *Site) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}
