// Package netconn is the drivers' connection layer: Conns remembers the connections it dials so
// that Close can break them (conns.go), and Conn is the wrapper that costs one write and one
// read system call per operation, with the write sent from the read callback once the poller
// has been re-armed.
package netconn

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Conn is a connection whose writes are sent at the next Read, which then waits for the
// reply in Go's network poller without first trying a read that would fail. A Read that waits
// for anything but the reply to what is queued must Flush first (see Flush).
//
// Why: a client of request–reply protocols writes a request and reads the reply. Through a
// plain net.Conn that costs, per operation, a write, a read that fails with EAGAIN (the
// reply is never there microseconds after the request), a park of the goroutine and the read
// that succeeds. Here Read calls syscall.RawConn.Read, which first resets the descriptor's
// readiness, then calls back: the callback writes the pending request and reports "not
// readable yet", so the goroutine parks straight away and is woken with the reply, which the
// next callback reads. Resetting readiness before the write is what makes skipping the first
// read safe: a reply arrives after its request, so its readiness event cannot be lost. An
// operation costs one write(2) and one read(2), the same packets as before; the thread that
// waits in epoll_wait wakes once for all the replies that arrived meanwhile.
//
// The reads and writes are raw system calls (syscall.RawSyscall) on the non-blocking socket:
// they cannot block, and the scheduler's bookkeeping around a system call
// (entersyscall/exitsyscall) costs more than it saves — above all, the first system call
// after the process went idle wakes the runtime's sysmon thread from its deep sleep, after
// which it polls every 20 µs for a millisecond; with a round trip per operation that cycle
// repeated thousands of times a second and took a tenth of the client's CPU.
//
// Writes of more than maxDeferred bytes (bulk loads) are written at once through the
// net.Conn, so a client that needs to see a slow write (pgconn reads meanwhile to avoid a
// deadlock) still does. Deadlines and Close behave as the net.Conn's. One goroutine at a
// time may Read and Write, as with any protocol client; Close (of the underlying connection,
// by Conns.CloseAll) may come from any goroutine.
type Conn struct {
	net.Conn
	owner   *Conns
	rc      syscall.RawConn
	network string
	pending []byte // written by Write, sent by the next Read

	// State of the Read in progress, for its callbacks. The callbacks are method values made
	// once: passing a fresh closure to RawConn.Read would allocate on every call.
	buf    []byte
	n      int
	err    error
	sendFn func(uintptr) bool
	readFn func(uintptr) bool
}

// maxDeferred is the largest write that waits for the next Read.
const maxDeferred = 64 << 10

func newConn(nc net.Conn, owner *Conns) (*Conn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, errors.New("connection has no file descriptor")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	c := &Conn{Conn: nc, owner: owner, rc: rc, network: nc.LocalAddr().Network(),
		pending: make([]byte, 0, 4<<10)}
	c.sendFn, c.readFn = c.sendCallback, c.readCallback
	return c, nil
}

// Write queues b for the next Read (it copies b). A large write goes out at once.
func (c *Conn) Write(b []byte) (int, error) {
	if len(c.pending)+len(b) > maxDeferred {
		if len(c.pending) > 0 {
			if _, err := c.Conn.Write(c.pending); err != nil {
				return 0, err
			}
			c.pending = c.pending[:0]
		}
		if len(b) > maxDeferred {
			return c.Conn.Write(b)
		}
	}
	c.pending = append(c.pending, b...)
	return len(b), nil
}

// Flush sends what Write queued now, through the net.Conn. Call it before a Read that waits
// for something other than the reply to the queued bytes (a flow-control window, a frame the
// server sends on its own): Read's shortcut, which sends and then waits without trying a read,
// is safe only for a reply, which cannot arrive before its request; bytes that arrived before
// the send would lose their readiness to the reset and the wait would never end. After Flush,
// Read tries a read first.
func (c *Conn) Flush() error {
	if len(c.pending) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.pending)
	c.pending = c.pending[:0]
	return err
}

// Read sends what Write queued, then waits for at least one byte and reads it into b.
func (c *Conn) Read(b []byte) (int, error) {
	c.buf, c.n, c.err = b, 0, nil
	var err error
	if len(c.pending) == 0 {
		err = c.rc.Read(c.readFn)
	} else {
		err = c.rc.Read(c.sendFn)
		if err == nil && c.err == nil && len(c.pending) > 0 {
			// The socket's send buffer was full: finish the write through the poller.
			if _, err = c.Conn.Write(c.pending); err == nil {
				c.pending = c.pending[:0]
				err = c.rc.Read(c.readFn)
			}
		}
	}
	c.buf = nil
	if err == nil {
		err = c.err
	}
	if err != nil && err != io.EOF {
		var oe *net.OpError
		if !errors.As(err, &oe) {
			err = &net.OpError{Op: "read", Net: c.network, Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
		}
	}
	return c.n, err
}

// sendCallback is called first with the request pending, then, once the poller says the
// socket is readable, with nothing pending.
func (c *Conn) sendCallback(fd uintptr) bool {
	if len(c.pending) == 0 {
		return c.readCallback(fd)
	}
	for len(c.pending) > 0 {
		n, errno := rawIO(syscall.SYS_WRITE, fd, c.pending)
		switch errno {
		case 0:
			c.pending = c.pending[:copy(c.pending, c.pending[n:])]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return true // Read finishes the write through the poller
		default:
			c.err = &net.OpError{Op: "write", Net: c.network, Source: c.LocalAddr(), Addr: c.RemoteAddr(),
				Err: os.NewSyscallError("write", errno)}
			return true
		}
	}
	return false // the reply cannot be there yet: wait for it
}

func (c *Conn) readCallback(fd uintptr) bool {
	for {
		n, errno := rawIO(syscall.SYS_READ, fd, c.buf)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return false
		case errno != 0:
			c.err = os.NewSyscallError("read", errno)
		case n == 0 && len(c.buf) > 0:
			c.err = io.EOF
		default:
			c.n = n
		}
		return true
	}
}

// Close sends what is queued if the socket takes it without waiting (a client's goodbye,
// such as PostgreSQL's Terminate), then closes the connection. Call it from the goroutine
// that uses the connection; Conns.CloseAll closes connections in use.
func (c *Conn) Close() error {
	if len(c.pending) > 0 {
		_ = c.rc.Control(func(fd uintptr) { rawIO(syscall.SYS_WRITE, fd, c.pending) })
		c.pending = c.pending[:0]
	}
	c.owner.forget(c.Conn)
	return c.Conn.Close()
}

// rawIO reads or writes b on the non-blocking descriptor fd without telling the scheduler.
func rawIO(trap, fd uintptr, b []byte) (int, syscall.Errno) {
	r, _, errno := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(r), 0
}
