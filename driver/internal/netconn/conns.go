package netconn

import (
	"context"
	"net"
	"sync"
	"time"
)

// Conns dials the client's connections and remembers them, so that Close can break the ones
// an operation is blocked on (a stopped server) without waiting for the pool to get them back.
// Safe for concurrent use.
type Conns struct {
	mu     sync.Mutex
	open   map[net.Conn]struct{} // the dialled connections, unwrapped
	closed bool
}

// dialer bounds a dial whatever its context: the generator's workers use a context that
// is never cancelled, and a member that drops SYNs would hold a worker for the kernel's
// retries (over two minutes) while Close cannot break a connection that does not exist yet.
var dialer = net.Dialer{Timeout: 30 * time.Second}

// Dial dials a tracked Conn, whose writes wait for the next Read (see Conn).
func (c *Conns) Dial(ctx context.Context, network, addr string) (*Conn, error) {
	nc, err := dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	w, err := newConn(nc, c)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if err := c.track(nc); err != nil {
		return nil, err
	}
	return w, nil
}

// DialPlain dials a tracked connection that reads and writes as the net.Conn does. It is for
// clients that may write without reading a reply afterwards (go-sql-driver/mysql closes a
// statement so), which Conn would hold back until the next Read.
func (c *Conns) DialPlain(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if err := c.track(nc); err != nil {
		return nil, err
	}
	return &plainConn{Conn: nc, owner: c}, nil
}

// track remembers nc, or closes it and returns net.ErrClosed after CloseAll.
func (c *Conns) track(nc net.Conn) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		nc.Close()
		return net.ErrClosed
	}
	if c.open == nil {
		c.open = make(map[net.Conn]struct{})
	}
	c.open[nc] = struct{}{}
	return nil
}

// forget is called by a wrapper's Close.
func (c *Conns) forget(nc net.Conn) {
	c.mu.Lock()
	delete(c.open, nc)
	c.mu.Unlock()
}

// CloseAll closes every connection and refuses new ones; operations blocked on one return an
// error at once. Idempotent, and safe while the connections are in use.
func (c *Conns) CloseAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for nc := range c.open {
		nc.Close()
	}
	c.open = nil
}

// plainConn is a tracked connection with the net.Conn's own reads and writes.
type plainConn struct {
	net.Conn
	owner *Conns
}

func (w *plainConn) Close() error {
	w.owner.forget(w.Conn)
	return w.Conn.Close()
}
