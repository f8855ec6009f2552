package drivertest

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/testdb"
)

// StoppedServer checks that, against a stopped server, an operation whose context ends
// returns the context's error, and Close breaks an operation that has no deadline (the
// generator's way of ending a run) with an error that is net.ErrClosed; after the server
// resumes, the pool replaces the broken connection.
func StoppedServer(t *testing.T, b Binding) {
	ctx := context.Background()
	box, _, db := open(ctx, t, b, 1)
	tbl := driver.Table{Name: "usertable", FieldCount: 1}
	if err := db.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := db.Insert(ctx, "user1", tbl.Fields(), [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}

	resume := stopServer(t, box)
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	start := time.Now()
	err := db.Read(tctx, "user1", nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("read with a 200ms deadline on a stopped server: %v after %v, want DeadlineExceeded", err, time.Since(start))
	}
	resume()
	if err := db.Read(ctx, "user1", nil); err != nil {
		t.Errorf("read after the server resumed: %v", err)
	}

	stopServer(t, box)
	done := make(chan error, 1)
	go func() { done <- db.Read(ctx, "user1", nil) }()
	select {
	case err := <-done:
		t.Fatalf("read on a stopped server returned %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	db.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("read broken by Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not break the read blocked on a stopped server")
	}
}

// stopServer stops the box's processes (SIGSTOP) and returns the function that resumes them;
// they are resumed when the test ends in any case.
func stopServer(t *testing.T, box platform.Box) func() {
	t.Helper()
	pause, resume := testdb.Pauser(t, box)
	pause()
	return resume
}
