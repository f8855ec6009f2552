package mysql

import (
	"context"
	"net"
	"sync"
)

// conns dials the client's connections and remembers them, so that Close can break the ones
// an operation is blocked on (a stopped server) without waiting for the pool to get them back.
type conns struct {
	mu     sync.Mutex
	open   map[*conn]struct{}
	closed bool
	dialer net.Dialer
}

func (c *conns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := c.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	w := &conn{Conn: nc, owner: c}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		nc.Close()
		return nil, net.ErrClosed
	}
	if c.open == nil {
		c.open = make(map[*conn]struct{})
	}
	c.open[w] = struct{}{}
	return w, nil
}

// closeAll closes every connection and refuses new ones. Idempotent.
func (c *conns) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for w := range c.open {
		w.Conn.Close()
	}
	c.open = nil
}

// conn is a tracked connection.
type conn struct {
	net.Conn
	owner *conns
}

func (w *conn) Close() error {
	w.owner.mu.Lock()
	delete(w.owner.open, w)
	w.owner.mu.Unlock()
	return w.Conn.Close()
}
