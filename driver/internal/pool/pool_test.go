package pool

import (
	"context"
	"errors"
	"testing"
	"time"
)

type conn struct {
	id           int
	broken, shut bool
}

var errClosed = errors.New("closed")

func newPool(size int) (*Pool[conn], *int) {
	dials := 0
	dial := func(context.Context) (*conn, error) { dials++; return &conn{id: dials}, nil }
	p := New(size, &conn{id: 0}, dial, func(c *conn) bool { return c.broken }, func(c *conn) { c.shut = true }, errClosed)
	return p, &dials
}

func TestGetPut(t *testing.T) {
	ctx := context.Background()
	p, dials := newPool(2)
	a, _ := p.Get(ctx)
	b, _ := p.Get(ctx)
	if a.id != 0 || b.id != 1 || *dials != 1 {
		t.Fatalf("first Get reuses the given connection, second dials: got %d, %d, dials %d", a.id, b.id, *dials)
	}
	// All slots in use: Get waits until its context ends.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := p.Get(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get with every slot busy: %v", err)
	}
	b.broken = true
	p.Put(b) // unusable: closed, and its slot redials
	if !b.shut {
		t.Error("a broken connection was not closed")
	}
	p.Put(a)
	c, _ := p.Get(ctx)
	d, _ := p.Get(ctx)
	if (c != a && d != a) || *dials != 2 {
		t.Errorf("after Put: got %d, %d, dials %d; want the healthy one back and one new dial", c.id, d.id, *dials)
	}
	p.Put(c)
	p.Close()
	if !a.shut && !c.shut {
		t.Error("Close left an idle connection open")
	}
	if _, err := p.Get(ctx); !errors.Is(err, errClosed) {
		t.Errorf("Get after Close: %v", err)
	}
	p.Put(d) // a connection returned after Close is closed
	if !d.shut {
		t.Error("Put after Close did not close the connection")
	}
	p.Close() // idempotent
}
