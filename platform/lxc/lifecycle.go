package lxc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostproc"
)

// start runs lxc-start in the foreground as our child: the server inherits its stdout and
// stderr (the log file, with LXC's own errors), and its exit is the container's.
func (b *box) start() error {
	argv := b.lxc("lxc-start", "-F")
	proc, err := hostproc.Start(hostproc.Unpinned(nil, argv), b.logPath)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.proc = proc
	b.mu.Unlock()
	b.facts["lxc_start"] = strings.Join(argv, " ")
	return nil
}

func (b *box) LogTail(n int) string {
	data, err := os.ReadFile(b.logPath)
	if err != nil {
		return ""
	}
	return command.Tail(data, n)
}

// Exec runs argv as root in the container (its namespaces and group), in the data directory.
func (b *box) Exec(ctx context.Context, argv []string) ([]byte, error) {
	return command.RunWrapped(ctx, command.Options{Dir: "/"},
		b.lxc("lxc-attach", "--clear-env", "--", "env", "-C", b.layout.DataDir, "--"), argv)
}

// Stop asks LXC to stop the container with the server's own signal and waits for it.
func (b *box) Stop(ctx context.Context) error {
	b.mu.Lock()
	proc := b.proc
	b.mu.Unlock()
	if proc == nil {
		return nil
	}
	select {
	case <-proc.Exited():
		return nil
	default:
	}
	// lxc-stop sends lxc.signal.halt (the server's own signal), waits, then kills pid 1.
	sctx, cancel := context.WithTimeout(ctx, stopTimeout+10*time.Second)
	defer cancel()
	_, err := command.Run(sctx, b.lxc("lxc-stop", "-t", fmt.Sprint(int(stopTimeout.Seconds())))...)
	if proc.WaitOr(10*time.Second, ctx.Done()) {
		return nil
	}
	_ = b.group.Kill(10 * time.Second)
	return fmt.Errorf("%s did not stop (lxc-stop: %v); killed", b.req.DBMS.Name(), err)
}

// Capture copies the stopped data directory from the host side of its storage.
func (b *box) Capture(ctx context.Context, dst string) error {
	return storage.Capture(ctx, b.dataOnHost, dst)
}

// Teardown stops the container, kills what is left in its groups, removes the groups, the
// box's bridge, LXC's lock file, the storage and the work directory. Idempotent.
func (b *box) Teardown(ctx context.Context) error {
	if !b.down.CompareAndSwap(false, true) {
		return nil
	}
	ctx, cancel0 := platform.TeardownContext(ctx)
	defer cancel0()
	var errs []error
	errs = append(errs, platform.StopBeforeTeardown(ctx, b.Stop, 30*time.Second))
	_, err := b.m.Remove(ctx)
	errs = append(errs, err)
	if b.store != nil {
		errs = append(errs, b.store.Release(ctx))
	}
	if storage.MountedUnder(b.req.WorkDir) {
		errs = append(errs, fmt.Errorf("not removing %s: something is still mounted under it", b.req.WorkDir))
	} else {
		errs = append(errs, os.RemoveAll(b.req.WorkDir))
	}
	return errors.Join(errs...)
}

// Traits: a single box whose client runs in boxbench's process.
func (b *box) Traits() platform.Traits { return platform.Traits{} }
