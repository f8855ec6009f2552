package redis

import (
	"context"
	"net"
	"sync"
	"time"
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

// conn hides the socket's syscall.Conn from go-redis on purpose: go-redis then skips the
// health check it otherwise makes on every pool checkout (a deadline reset and a MSG_PEEK
// recvfrom: one more system call per operation, which is client CPU the benchmark would
// charge to the box). The cost is that a connection the server closed is noticed on its next
// use, as an error, instead of being replaced silently; servers do not close connections
// during a run. Redundant zero deadlines are skipped for the same reason.
type conn struct {
	net.Conn
	owner       *conns
	hasDeadline bool
}

func (w *conn) SetDeadline(t time.Time) error {
	if t.IsZero() && !w.hasDeadline {
		return nil
	}
	w.hasDeadline = !t.IsZero()
	return w.Conn.SetDeadline(t)
}

func (w *conn) Close() error {
	w.owner.mu.Lock()
	delete(w.owner.open, w)
	w.owner.mu.Unlock()
	return w.Conn.Close()
}
