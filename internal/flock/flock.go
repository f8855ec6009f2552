// Package flock takes exclusive (and shared) advisory locks on lock files, across processes: the
// build locks of the root filesystem and guest image caches. Closing the returned unlock releases
// the lock. Lock files are never removed by this package: deleting one while another process waits
// on it would let two holders in.
//
// Layer (docs/architecture.md): a leaf — it imports no other package of boxbench, so any
// package may import it.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// poll is how often a waiting Lock retries: flock itself cannot be cancelled.
const poll = 200 * time.Millisecond

// Lock takes the exclusive lock of path (created), waiting for another holder until ctx ends.
// waiting, when not nil, is called once if the lock is held by someone else.
func Lock(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	return wait(ctx, path, unix.LOCK_EX, waiting)
}

// Shared takes a shared lock of path (created): any number of holders, none while an exclusive
// holder has it. A reader holds it while it copies what the exclusive holder may remove.
func Shared(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	return wait(ctx, path, unix.LOCK_SH, waiting)
}

func wait(ctx context.Context, path string, how int, waiting func()) (unlock func(), err error) {
	for waited := false; ; waited = true {
		unlock, ok, err := try(path, how)
		if err != nil || ok {
			return unlock, err
		}
		if !waited && waiting != nil {
			waiting()
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for lock %s: %w", path, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// TryLock takes the exclusive lock of path (created) only when nobody holds it (ok false:
// someone does).
func TryLock(path string) (unlock func(), ok bool, err error) { return try(path, unix.LOCK_EX) }

func try(path string, how int) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, true, nil
}
