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

// Open returns dial's and check's errors as they are, closes a connection that fails its
// check, and holds one that passes as the first Get's.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	var dialled []*conn
	dial := func(context.Context) (*conn, error) {
		c := &conn{id: len(dialled)}
		dialled = append(dialled, c)
		return c, nil
	}
	unusable, closeConn := func(c *conn) bool { return c.broken }, func(c *conn) { c.shut = true }
	errDial, errCheck := errors.New("refused"), errors.New("no answer")

	failDial := func(context.Context) (*conn, error) { return nil, errDial }
	if _, err := Open(ctx, 2, failDial, nil, unusable, closeConn, errClosed); err != errDial {
		t.Errorf("dial fails: %v, want %v", err, errDial)
	}
	failCheck := func(context.Context, *conn) error { return errCheck }
	if _, err := Open(ctx, 2, dial, failCheck, unusable, closeConn, errClosed); err != errCheck {
		t.Errorf("check fails: %v, want %v", err, errCheck)
	}
	if len(dialled) != 1 || !dialled[0].shut {
		t.Fatalf("the connection that failed its check was not closed: %+v", dialled)
	}
	checked := 0
	p, err := Open(ctx, 2, dial, func(context.Context, *conn) error { checked++; return nil }, unusable, closeConn, errClosed)
	if err != nil || checked != 1 {
		t.Fatalf("Open: %v, %d checks", err, checked)
	}
	defer p.Close()
	if c, _ := p.Get(ctx); c != dialled[1] || c.shut {
		t.Errorf("the first Get got %+v, want the checked connection %+v", c, dialled[1])
	}
}
