// Package pool is the drivers' connection pool: one slot per worker, filled lazily, a broken
// connection leaving its slot empty for a new dial. Get and Put do not allocate; the common
// case (the worker's own connection is waiting) is one channel receive.
package pool

import (
	"context"
	"sync"
	"sync/atomic"
)

// Pool holds up to its size connections of type C.
//
// Contract: Get and Put are safe for concurrent use; every successful Get is followed by one
// Put of the same connection (or nil when it was lost). Close is idempotent; after it Get
// returns the pool's closed error, and Put closes what it is given.
type Pool[C any] struct {
	idle      chan *C // capacity = size; nil entries are slots not yet dialled
	done      chan struct{}
	closed    atomic.Bool
	once      sync.Once
	dial      func(context.Context) (*C, error)
	unusable  func(*C) bool // a connection that must not be reused (broken, closed)
	closeConn func(*C)
	errClosed error
}

// New makes a pool of size slots (at least one) holding first, an already dialled connection.
// errClosed is what Get returns once the pool is closed.
func New[C any](size int, first *C, dial func(context.Context) (*C, error), unusable func(*C) bool, closeConn func(*C), errClosed error) *Pool[C] {
	size = max(size, 1)
	p := &Pool[C]{idle: make(chan *C, size), done: make(chan struct{}), dial: dial,
		unusable: unusable, closeConn: closeConn, errClosed: errClosed}
	p.idle <- first
	for i := 1; i < size; i++ {
		p.idle <- nil
	}
	return p
}

// Open dials the pool's first connection and, when check is not nil, checks it (a ping), so
// that a server that does not answer fails here rather than at the first Get; the other slots
// are dialled on first use. A connection that fails its check is closed. The error is dial's or
// check's as it is: the caller names the server. The other arguments are New's.
func Open[C any](ctx context.Context, size int, dial func(context.Context) (*C, error), check func(context.Context, *C) error,
	unusable func(*C) bool, closeConn func(*C), errClosed error) (*Pool[C], error) {
	c, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(ctx, c); err != nil {
			closeConn(c)
			return nil, err
		}
	}
	return New(size, c, dial, unusable, closeConn, errClosed), nil
}

// Get takes a connection, dialling it if its slot is empty. It blocks while all are in use.
func (p *Pool[C]) Get(ctx context.Context) (*C, error) {
	if p.closed.Load() {
		return nil, p.errClosed
	}
	var c *C
	select {
	case c = <-p.idle: // the common case: a worker's connection is waiting for it
	default:
		select {
		case c = <-p.idle:
		case <-p.done:
			return nil, p.errClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c != nil {
		return c, nil
	}
	c, err := p.dial(ctx)
	if err != nil {
		p.idle <- nil
		return nil, err
	}
	return c, nil
}

// Put returns a connection; an unusable one (or any, once the pool is closed) is closed and
// leaves its slot empty for a new dial.
func (p *Pool[C]) Put(c *C) {
	if c != nil && (p.closed.Load() || p.unusable(c)) {
		p.closeConn(c)
		c = nil
	}
	p.idle <- c // never blocks: the channel has room for every connection
}

// Close refuses new Gets and closes the idle connections. Connections operations still hold
// are the caller's to break (the drivers close their sockets). Idempotent.
func (p *Pool[C]) Close() {
	p.once.Do(func() {
		p.closed.Store(true)
		close(p.done)
		for {
			select {
			case c := <-p.idle:
				if c != nil {
					p.closeConn(c)
				}
				continue
			default:
			}
			return
		}
	})
}
