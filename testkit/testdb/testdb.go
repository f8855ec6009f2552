// Package testdb starts a real database server natively for integration tests, through the
// same native platform the product uses.
package testdb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/native"
	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/prometheus/procfs"
)

var seq atomic.Int64

// Start runs database d (redis.Redis{}, or one dbms.WithPassword wraps) on a bind directory with
// no limits and returns the ready box; it is torn down when the test ends. Skips (fails in CI)
// when the host cannot run it.
func Start(t testing.TB, d dbms.DBMS) (platform.Box, dbms.DBMS) {
	t.Helper()
	return StartOn(t, d, "host")
}

// StartOn is Start on the native platform's network (host or unix).
func StartOn(t testing.TB, d dbms.DBMS, network string) (platform.Box, dbms.DBMS) {
	t.Helper()
	testenv.NeedRoot(t)
	name := d.Name()
	testenv.NeedCommands(t, dbms.ServerBinary(d), "setpriv")
	exp := fmt.Sprintf("test-%d", os.Getpid())
	run := fmt.Sprintf("%s-%d", name, seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := native.New().Provision(ctx, platform.Request{Experiment: exp, Run: run,
		WorkDir: filepath.Join(testenv.WorkRoot(t), run), DBMS: d,
		Choice: platform.Choice{Storage: "bind", Network: network}})
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := b.Teardown(context.Background()); err != nil {
			t.Errorf("teardown %s: %v", name, err)
		}
		_ = cgroup.At("/boxbench/" + exp).Remove()
	})
	return b, d
}

// Pauser returns functions that stop (SIGSTOP) and resume (SIGCONT) the box's processes, as
// they are when Pauser is called; they are resumed when the test ends in any case.
func Pauser(t testing.TB, box platform.Box) (pause, resume func()) {
	t.Helper()
	pids, err := box.Observe().Cgroup.Pids()
	if err != nil || len(pids) == 0 {
		t.Fatalf("server pids: %v %v", pids, err)
	}
	signal := func(sig syscall.Signal) {
		for _, p := range pids {
			_ = syscall.Kill(p, sig)
		}
	}
	t.Cleanup(func() { signal(syscall.SIGCONT) })
	pause = func() {
		signal(syscall.SIGSTOP)
		// kill returns before the process has stopped: one thread takes the signal and stops
		// the others when it next runs, and on a loaded host a fast client's request can be
		// served meanwhile. Wait until every thread is stopped.
		deadline := time.Now().Add(10 * time.Second)
		for !allStopped(pids) {
			if time.Now().After(deadline) {
				t.Fatalf("server pids %v did not stop within 10s of SIGSTOP", pids)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return pause, func() { signal(syscall.SIGCONT) }
}

// allStopped says every thread of every live process in pids is stopped (state T or t) or
// dead (Z, X: a backend that exited as the server stopped stays a zombie, its parent stopped
// too, and runs nothing).
func allStopped(pids []int) bool {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return false
	}
	for _, p := range pids {
		threads, err := fs.AllThreads(p)
		if err != nil {
			continue // exited
		}
		for _, th := range threads {
			st, err := th.Stat()
			if err != nil {
				continue
			}
			if !strings.ContainsAny(st.State, "TtZX") {
				return false
			}
		}
	}
	return true
}
