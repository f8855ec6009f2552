package redis

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/boxbench/boxbench/driver/internal/netconn"
	"io"
	"strconv"
)

// client is one connection speaking RESP2: requests are encoded into a buffer that goes out
// in one write; replies are parsed straight from the read buffer, only as far as the binding
// needs (counts, nils, the scanned keys), without building values. Buffers are reused, so an
// operation allocates nothing. Used by one operation at a time.
type client struct {
	nc   *netconn.Conn
	wbuf []byte
	rbuf []byte
	r, w int // unread bytes are rbuf[r:w]
	// keys collects the elements of an array reply when asked (scan's index range): the
	// bytes of all elements back to back, and where each ends.
	keys    []byte
	keyEnds []int
	collect bool // the next exchange collects its first reply's elements
	broken  bool // an I/O or protocol error left the stream in an unknown state
}

const rbufSize = 32 << 10 // a 10×100-byte record's reply is 1.3 kB; bigger bulks stream through

func newClient(nc *netconn.Conn) *client {
	return &client{nc: nc, wbuf: make([]byte, 0, 4<<10), rbuf: make([]byte, rbufSize)}
}

// Request encoding. begin starts a command of n arguments (the command name included).

func (c *client) begin(n int) {
	c.wbuf = append(c.wbuf, '*')
	c.wbuf = strconv.AppendInt(c.wbuf, int64(n), 10)
	c.wbuf = append(c.wbuf, '\r', '\n')
}

func (c *client) arg(s string) {
	c.wbuf = append(c.wbuf, '$')
	c.wbuf = strconv.AppendInt(c.wbuf, int64(len(s)), 10)
	c.wbuf = append(c.wbuf, '\r', '\n')
	c.wbuf = append(c.wbuf, s...)
	c.wbuf = append(c.wbuf, '\r', '\n')
}

func (c *client) argBytes(b []byte) {
	c.wbuf = append(c.wbuf, '$')
	c.wbuf = strconv.AppendInt(c.wbuf, int64(len(b)), 10)
	c.wbuf = append(c.wbuf, '\r', '\n')
	c.wbuf = append(c.wbuf, b...)
	c.wbuf = append(c.wbuf, '\r', '\n')
}

func (c *client) argInt(v int64) {
	var num [20]byte
	c.argBytes(strconv.AppendInt(num[:0], v, 10))
}

// send queues the encoded commands (conn sends them with the next read) and empties the
// buffer.
func (c *client) send() error {
	_, err := c.nc.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	if err != nil {
		c.broken = true
	}
	return err
}

// reply is what the binding learns from one reply.
type reply struct {
	kind     byte  // '+', '-', ':', '$' or '*'
	n        int64 // the integer; the bulk's or array's length (-1: nil)
	firstNil bool  // an array whose first element is a nil bulk (HMGET of a missing key)
}

// errServer is an error reply ("-ERR …"): the command failed, the connection is fine.
type errServer struct{ msg string }

func (e *errServer) Error() string { return "redis: " + e.msg }

var errProtocol = errors.New("redis: protocol error")

// readReply reads one whole reply. With collect, the elements of an array reply are kept in
// c.keys and c.keyEnds. An error reply is returned as an *errServer error.
func (c *client) readReply(collect bool) (reply, error) {
	rep, err := c.readValue(0, collect)
	if err != nil && !isServerError(err) {
		c.broken = true
	}
	return rep, err
}

func isServerError(err error) bool {
	_, ok := err.(*errServer) // never wrapped inside this package
	return ok
}

func (c *client) readValue(depth int, collect bool) (reply, error) {
	line, err := c.line()
	if err != nil {
		return reply{}, err
	}
	if len(line) == 0 {
		return reply{}, errProtocol
	}
	rep := reply{kind: line[0]}
	switch rep.kind {
	case '+':
		return rep, nil
	case '-':
		return rep, &errServer{msg: string(line[1:])}
	case ':', '$', '*':
		if rep.n, err = parseInt(line[1:]); err != nil {
			return rep, err
		}
	default:
		return rep, fmt.Errorf("%w: reply type %q", errProtocol, rep.kind)
	}
	switch rep.kind {
	case '$':
		if rep.n >= 0 {
			err = c.bulk(int(rep.n), collect && depth == 1)
		}
		return rep, err
	case '*':
		if depth > 8 {
			return rep, fmt.Errorf("%w: arrays nested too deep", errProtocol)
		}
		var firstErr error
		for i := int64(0); i < rep.n; i++ {
			el, err := c.readValue(depth+1, collect)
			if err != nil {
				if !isServerError(err) {
					return rep, err
				}
				if firstErr == nil {
					firstErr = err // keep reading: the rest of the reply is still on the wire
				}
			}
			if i == 0 && el.kind == '$' && el.n < 0 {
				rep.firstNil = true
			}
		}
		return rep, firstErr
	}
	return rep, nil
}

// line returns the next line without its CRLF; it stays valid until the next read.
func (c *client) line() ([]byte, error) {
	for {
		buf := c.rbuf[c.r:c.w]
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			if i == 0 || buf[i-1] != '\r' {
				return nil, fmt.Errorf("%w: line without CRLF", errProtocol)
			}
			c.r += i + 1
			return buf[:i-1], nil
		}
		if err := c.fill(); err != nil {
			return nil, err
		}
	}
}

// bulk consumes a bulk string of n bytes and its CRLF, keeping it in c.keys if asked.
func (c *client) bulk(n int, keep bool) error {
	rest := n + 2
	for rest > 0 {
		if c.r == c.w {
			if err := c.fill(); err != nil {
				return err
			}
		}
		take := min(rest, c.w-c.r)
		if keep {
			data := c.rbuf[c.r : c.r+take]
			if over := take - (rest - 2); over > 0 { // do not keep the CRLF
				data = data[:len(data)-over]
			}
			c.keys = append(c.keys, data...)
		}
		c.r += take
		rest -= take
	}
	if keep {
		c.keyEnds = append(c.keyEnds, len(c.keys))
	}
	return nil
}

// fill reads more bytes, moving the unread ones to the front of the buffer first.
func (c *client) fill() error {
	if c.r > 0 {
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
	if c.w == len(c.rbuf) { // one line longer than the buffer: grow it
		c.rbuf = append(c.rbuf, make([]byte, len(c.rbuf))...)
	}
	n, err := c.nc.Read(c.rbuf[c.w:])
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	c.w += n
	return nil
}

// parseInt parses a RESP integer without allocating.
func parseInt(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, fmt.Errorf("%w: bad integer %q", errProtocol, b)
	}
	var v int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("%w: bad integer %q", errProtocol, b)
		}
		v = v*10 + int64(ch-'0')
	}
	if neg {
		v = -v
	}
	return v, nil
}
