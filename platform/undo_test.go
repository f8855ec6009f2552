package platform

import (
	"context"
	"testing"
	"time"
)

// A teardown context survives the caller's cancellation but always has a deadline: the
// caller's when sooner, else TeardownTimeout.
func TestTeardownContext(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	cancel() // Ctrl-C before teardown
	ctx, done := TeardownContext(parent)
	defer done()
	if ctx.Err() != nil {
		t.Fatal("a cancelled caller cut teardown short")
	}
	d, ok := ctx.Deadline()
	if !ok || time.Until(d) > TeardownTimeout {
		t.Fatalf("teardown without a bounded deadline: %v %v", d, ok)
	}
	soon, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	ctx2, done2 := TeardownContext(soon)
	defer done2()
	if d2, _ := ctx2.Deadline(); d2.After(time.Now().Add(2 * time.Second)) {
		t.Errorf("the caller's sooner deadline was dropped: %v", d2)
	}
}
