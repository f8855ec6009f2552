package cassandra

import (
	"context"
	"fmt"
	"slices"

	"github.com/boxbench/boxbench/driver/cassandra/cql"
	"github.com/boxbench/boxbench/driver/internal/netconn"
)

// conn is one CQL connection to one node, used by one worker at a time: requests go out on
// stream 0 (a batch insert pipelines one stream per row), so a round trip is one write and
// one read, as in the Redis and PostgreSQL clients. Its buffers are reused.
type conn struct {
	nc     *netconn.Conn
	node   int
	wbuf   []byte // the request(s) being built
	vals   []byte // the bound values of the statement being built, each a [bytes]
	nvals  int
	rbuf   []byte // received bytes; rbuf[r:w] not yet consumed
	r, w   int
	hdr    cql.Header
	body   []byte            // the last frame's message, a view of rbuf
	prep   map[string][]byte // statement → prepared id, this connection's (ids are per node)
	broken bool              // an I/O or protocol error, or a context that closed it
}

func newConn(nc *netconn.Conn, node int) *conn {
	return &conn{nc: nc, node: node, wbuf: make([]byte, 0, 4<<10), vals: make([]byte, 0, 4<<10),
		rbuf: make([]byte, 64<<10), prep: map[string][]byte{}}
}

// send queues wbuf on the connection (netconn sends it with the next read).
func (c *conn) send() error {
	_, err := c.nc.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	return err
}

// readFrame reads the next response frame into c.hdr and c.body (valid until the next read).
func (c *conn) readFrame() error {
	if err := c.fill(cql.HeaderLen); err != nil {
		return err
	}
	h, err := cql.ParseHeader(c.rbuf[c.r:c.w])
	if err != nil {
		return err
	}
	if err := c.fill(cql.HeaderLen + h.Length); err != nil {
		return err
	}
	c.hdr = h
	start := c.r + cql.HeaderLen
	c.r = start + h.Length
	c.body, err = cql.Body(h, c.rbuf[start:c.r])
	return err
}

// fill reads until rbuf holds n unconsumed bytes, growing it for a frame larger than it.
func (c *conn) fill(n int) error {
	if c.w-c.r >= n {
		return nil
	}
	if c.r > 0 { // keep the unconsumed bytes at the front
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
	if n > len(c.rbuf) {
		c.rbuf = slices.Grow(c.rbuf[:c.w], n-c.w)[:max(n, 2*len(c.rbuf))]
	}
	for c.w < n {
		k, err := c.nc.Read(c.rbuf[c.w:])
		c.w += k
		if err != nil && c.w < n {
			return err
		}
	}
	return nil
}

// roundTrip sends wbuf and reads one response frame. A context that can end costs a watcher
// (context.AfterFunc) that closes the connection when it ends, which is what stops a read
// blocked on a stopped server; the generator's workers pass one that cannot and stop stuck
// operations with Close (see the Redis client).
func (c *conn) roundTrip(ctx context.Context, frames int) error {
	var stop func() bool
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			c.wbuf = c.wbuf[:0]
			return err
		}
		stop = context.AfterFunc(ctx, func() { c.nc.Conn.Close() })
	}
	err := c.send()
	var first error
	for i := 0; i < frames && err == nil; i++ {
		if err = c.readFrame(); err == nil && c.hdr.Op == cql.OpError && first == nil {
			first = cql.ParseError(c.body)
		}
	}
	if err != nil {
		c.broken = true
	}
	if stop != nil && !stop() { // the context ended: its watcher closed the connection
		c.broken = true
		if err != nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	return first
}

// expect returns the last frame as an error unless its opcode is op.
func (c *conn) expect(op byte, what string) error {
	switch c.hdr.Op {
	case op:
		return nil
	case cql.OpError:
		return cql.ParseError(c.body)
	}
	c.broken = true
	return fmt.Errorf("%w: opcode 0x%02x in reply to %s", cql.ErrProtocol, c.hdr.Op, what)
}

// handshake checks the server speaks v4 (OPTIONS), starts the connection (STARTUP) and
// authenticates with SASL PLAIN when the server asks (PasswordAuthenticator).
func (c *conn) handshake(ctx context.Context, user, password string) error {
	c.wbuf = cql.AppendOptions(c.wbuf, 0)
	if err := c.roundTrip(ctx, 1); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	if err := c.expect(cql.OpSupported, "OPTIONS"); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	r := cql.Reader{B: c.body}
	if v, ok := r.StringMultimap()["PROTOCOL_VERSIONS"]; ok && !slices.Contains(v, "4/v4") {
		return fmt.Errorf("the server does not speak CQL protocol v4 (it offers %v)", v)
	}
	c.wbuf = cql.AppendStartup(c.wbuf, 0)
	if err := c.roundTrip(ctx, 1); err != nil {
		return fmt.Errorf("startup: %w", err)
	}
	switch c.hdr.Op {
	case cql.OpReady:
		return nil
	case cql.OpAuthenticate:
	default:
		return fmt.Errorf("startup: %w", c.expect(cql.OpReady, "STARTUP"))
	}
	r = cql.Reader{B: c.body}
	class := string(r.String())
	if password == "" {
		return fmt.Errorf("the server requires authentication (%s) and the run has no password", class)
	}
	c.wbuf = cql.AppendAuthResponse(c.wbuf, 0, user, password)
	err := c.roundTrip(ctx, 1)
	if err == nil {
		err = c.expect(cql.OpAuthSuccess, "AUTH_RESPONSE")
	}
	if err != nil {
		return fmt.Errorf("authentication as %q (%s): %w", user, class, err)
	}
	return nil
}

// query runs q (no bound values) and leaves its result in c.body.
func (c *conn) query(ctx context.Context, q string, cl cql.Consistency) error {
	c.wbuf = cql.AppendQuery(c.wbuf, 0, q, cl)
	if err := c.roundTrip(ctx, 1); err != nil {
		return err
	}
	return c.expect(cql.OpResult, "QUERY")
}

// prepared returns q's statement id on this connection, preparing it the first time.
func (c *conn) prepared(ctx context.Context, q string) ([]byte, error) {
	if id, ok := c.prep[q]; ok {
		return id, nil
	}
	c.wbuf = cql.AppendPrepare(c.wbuf, 0, q)
	err := c.roundTrip(ctx, 1)
	if err == nil {
		err = c.expect(cql.OpResult, "PREPARE")
	}
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", q, err)
	}
	r := cql.Reader{B: c.body}
	if k := r.Int(); k != cql.ResultPrepared {
		c.broken = true
		return nil, fmt.Errorf("prepare %q: %w: result kind %d", q, cql.ErrProtocol, k)
	}
	id, err := cql.Prepared(&r)
	if err != nil {
		c.broken = true
		return nil, fmt.Errorf("prepare %q: %w", q, err)
	}
	id = slices.Clone(id)
	c.prep[q] = id
	return id, nil
}

// begin starts the bound values of the next statement.
func (c *conn) begin() { c.vals, c.nvals = c.vals[:0], 0 }

func (c *conn) bindString(s string) { c.vals = cql.AppendStringValue(c.vals, s); c.nvals++ }
func (c *conn) bindBytes(b []byte)  { c.vals = cql.AppendBytes(c.vals, b); c.nvals++ }
func (c *conn) bindInt(v int32)     { c.vals = cql.AppendIntValue(c.vals, v); c.nvals++ }

// execute runs the prepared statement q with the values bound since begin, preparing it if
// needed, and returns the number of rows of a Rows result (0 for a write). A statement the
// server has forgotten (UNPREPARED: the table was recreated, the node restarted) is prepared
// again and run once more.
func (c *conn) execute(ctx context.Context, q string, cl cql.Consistency) (int, error) {
	for attempt := 0; ; attempt++ {
		id, err := c.prepared(ctx, q)
		if err != nil {
			return 0, err
		}
		c.wbuf = cql.AppendExecute(c.wbuf, 0, id, cl, c.nvals, c.vals)
		err = c.roundTrip(ctx, 1)
		if cql.IsUnprepared(err) && attempt == 0 {
			delete(c.prep, q)
			continue
		}
		if err != nil {
			return 0, err
		}
		return c.rowCount()
	}
}

// rowCount reads the last RESULT's row count (0 for a result that has no rows).
func (c *conn) rowCount() (int, error) {
	if c.hdr.Op != cql.OpResult {
		return 0, c.expect(cql.OpResult, "EXECUTE")
	}
	r := cql.Reader{B: c.body}
	if r.Int() != cql.ResultRows {
		return 0, r.Err
	}
	_, n, err := cql.Rows(&r)
	if err != nil {
		c.broken = true
	}
	return n, err
}
