package flock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A held lock is not taken again (the kernel's flock is per open file, so this holds within one
// process too); Lock waits, says so once, and gets it when the holder lets go.
func TestLockWaitsForTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	if _, ok, err := TryLock(path); ok || err != nil {
		t.Fatalf("second TryLock got the held lock: %v %v", ok, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, nil); err == nil {
		t.Fatal("Lock got a held lock")
	}
	waits := 0
	time.AfterFunc(300*time.Millisecond, unlock)
	u2, err := Lock(context.Background(), path, func() { waits++ })
	if err != nil || waits != 1 {
		t.Fatalf("Lock after release: %v, waited %d times", err, waits)
	}
	u2()
}

// Shared holders do not exclude each other; they exclude an exclusive holder, and it them.
func TestSharedExcludesExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	ctx := context.Background()
	r1, err := Shared(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Shared(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := TryLock(path); ok {
		t.Fatal("exclusive lock taken while shared holders have it")
	}
	r1()
	r2()
	unlock, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("exclusive lock after the shared holders let go: %v %v", ok, err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := Shared(short, path, nil); err == nil {
		t.Fatal("shared lock taken while an exclusive holder has it")
	}
	unlock()
}

// Holders names this process while it holds the lock (the kernel's /proc/locks), and nobody
// once it lets go; waiters are not holders.
func TestHolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	h := Holders(path)
	want := fmt.Sprintf("pid %d (", os.Getpid())
	if len(h) != 1 || !strings.HasPrefix(h[0], want) {
		t.Errorf("Holders while held = %q, want one entry starting %q", h, want)
	}
	unlock()
	if h := Holders(path); len(h) != 0 {
		t.Errorf("Holders after release = %q, want none", h)
	}
	got := parseLocks(strings.NewReader("1: FLOCK  ADVISORY  WRITE 42 fe:00:7 0 EOF\n"+
		"1: -> FLOCK  ADVISORY  WRITE 43 fe:00:7 0 EOF\n2: FLOCK  ADVISORY  WRITE 44 fe:00:8 0 EOF\n"+
		"3: OFDLCK ADVISORY  WRITE -1 fe:00:7 0 EOF\n"), 0xfe, 0, 7)
	if len(got) != 1 || got[0] != 42 {
		t.Errorf("parseLocks = %v, want [42]", got)
	}
}
