package etcd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/boxbench/boxbench/driver/internal/netconn"
)

// conn is one HTTP/2 connection to an etcd member, cleartext with prior knowledge (h2c: etcd
// serves gRPC on its client port without TLS), carrying one unary call at a time on a new
// stream. Frames are written with x/net/http2's Framer into the netconn.Conn's pending buffer
// (no system call) and go out at the next read, so a call costs one write and usually one
// read; frames are read and parsed here, in place in one reused buffer (the Framer's reader
// allocates a frame struct for every HEADERS frame), with an hpack Decoder for the header
// blocks: the server's headers and trailers are the same every time, so after the first reply
// they come from its dynamic table and decode without allocating.
//
// Flow control: the client announces a stream window of 1 GiB and opens the connection window
// as far; it returns what it received to the connection window (a WINDOW_UPDATE queued with the
// next request) once half is used. Requests respect the server's windows and frame size (a
// large batch waits for its WINDOW_UPDATEs). SETTINGS are acknowledged, PINGs answered (both
// queued for the next write), GOAWAY marks the connection broken, RST_STREAM and a non-zero
// grpc-status end the call with an error (*StatusError).
//
// Not safe for concurrent use: one worker at a time (driver/internal/pool).
type conn struct {
	nc   *netconn.Conn
	fr   *http2.Framer // writes only
	dec  *hpack.Decoder
	emit func(hpack.HeaderField)

	authority string
	blocks    [nMethods][]byte // the request header block of each method (with the token)
	token     []byte

	nextID uint32
	broken bool // not to be reused: an I/O or protocol error, GOAWAY, a cancelled call

	// the server's settings and our send windows
	maxFrame    int
	peerInitWin int64
	connWin     int64 // what the server lets us send on the connection
	streamWin   int64 // … on the current stream
	recvUnacked int64 // received on the connection since our last WINDOW_UPDATE

	// control frames owed to the server, written before the next request's (see flushControl)
	settingsAcks int
	pingAcks     [][8]byte

	rbuf       []byte // frames read, rbuf[rpos:rend] not parsed yet
	rpos, rend int
	hblock     []byte // a header block split over CONTINUATION frames
	hstream    uint32 // … and its stream

	wmsg []byte // the request: gRPC prefix and message
	body []byte // the reply's DATA, gRPC prefix included
	msg  []byte // the reply message (body without the prefix), valid until the next call

	// the current call
	stream      uint32
	done        bool
	sawHeaders  bool
	decodingCur bool
	httpStatus  int
	grpcStatus  int // -1 while absent
	grpcMessage []byte
	rstCode     http2.ErrCode
	rst         bool
	goAway      bool
}

type method int

const (
	mRange method = iota
	mPut
	mTxn
	mDeleteRange
	mAuthenticate
	nMethods
)

var methodPaths = [nMethods]string{
	mRange:        "/etcdserverpb.KV/Range",
	mPut:          "/etcdserverpb.KV/Put",
	mTxn:          "/etcdserverpb.KV/Txn",
	mDeleteRange:  "/etcdserverpb.KV/DeleteRange",
	mAuthenticate: "/etcdserverpb.Auth/Authenticate",
}

const (
	clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	// recvWindow is the stream window we announce and the connection window we open.
	recvWindow = 1 << 30
	// defaultWindow and defaultFrame are HTTP/2's initial values until the server's SETTINGS.
	defaultWindow = 65535
	defaultFrame  = 16384
	// maxStreamID: past it the connection is retired (stream ids are 31 bits, odd for a client).
	maxStreamID = 1<<31 - 1
	readBufSize = 64 << 10
)

var (
	errProtocol = errors.New("etcd: HTTP/2 protocol error")
	errGoAway   = errors.New("etcd: the server is closing the connection (GOAWAY) and did not process the request")
)

// newConn starts HTTP/2 on nc: the client preface, SETTINGS and the connection window, queued
// for the first call.
func newConn(nc *netconn.Conn, authority string) (*conn, error) {
	c := &conn{nc: nc, authority: authority, nextID: 1, maxFrame: defaultFrame, peerInitWin: defaultWindow,
		connWin: defaultWindow, rbuf: make([]byte, readBufSize), grpcStatus: -1}
	c.fr = http2.NewFramer(nc, nil)
	c.emit = c.onField
	c.dec = hpack.NewDecoder(4096, c.emit)
	c.dec.SetMaxStringLength(1 << 20)
	c.setToken(nil)
	if _, err := io.WriteString(nc, clientPreface); err != nil {
		return nil, err
	}
	if err := c.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: recvWindow}); err != nil {
		return nil, err
	}
	if err := c.fr.WriteWindowUpdate(0, recvWindow-defaultWindow); err != nil {
		return nil, err
	}
	return c, nil
}

// setToken (re)builds the header block of every method: constant per connection and token, so
// it is encoded once. Fields that are not in HPACK's static table are sent "never indexed",
// which leaves the server's dynamic table alone, so the same bytes are valid on every stream.
func (c *conn) setToken(token []byte) {
	c.token = append(c.token[:0], token...)
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for m := range nMethods {
		buf.Reset()
		fields := []hpack.HeaderField{
			{Name: ":method", Value: "POST"},
			{Name: ":scheme", Value: "http"},
			{Name: ":path", Value: methodPaths[m], Sensitive: true},
			{Name: ":authority", Value: c.authority, Sensitive: true},
			{Name: "content-type", Value: "application/grpc", Sensitive: true},
			{Name: "te", Value: "trailers", Sensitive: true},
		}
		if len(token) > 0 && m != mAuthenticate {
			fields = append(fields, hpack.HeaderField{Name: "token", Value: string(token), Sensitive: true})
		}
		for _, f := range fields {
			_ = enc.WriteField(f) // writes to a bytes.Buffer: no error
		}
		c.blocks[m] = append(c.blocks[m][:0], buf.Bytes()...)
	}
}

// request returns the buffer to append the request message to.
func (c *conn) request() []byte {
	c.wmsg = append(c.wmsg[:0], 0, 0, 0, 0, 0)
	return c.wmsg
}

// call sends the request message msg (from request, appended to) as method m on a new stream
// and reads the reply into c.msg. A non-OK grpc-status is a *StatusError.
func (c *conn) call(m method, msg []byte) error {
	if c.nextID > maxStreamID {
		c.broken = true
		return fmt.Errorf("%w: stream ids exhausted", errProtocol)
	}
	c.wmsg = msg
	id := c.nextID
	c.nextID += 2
	c.stream, c.done, c.sawHeaders, c.rst, c.httpStatus, c.grpcStatus = id, false, false, false, 0, -1
	c.grpcMessage = c.grpcMessage[:0]
	c.body = c.body[:0]
	c.streamWin = c.peerInitWin
	if len(c.blocks[m]) > c.maxFrame {
		return fmt.Errorf("%w: request headers of %d bytes exceed the server's frame size", errProtocol, len(c.blocks[m]))
	}
	if err := c.flushControl(); err != nil {
		return err
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.blocks[m], EndHeaders: true}); err != nil {
		return c.fail(err)
	}
	binary.BigEndian.PutUint32(msg[1:5], uint32(len(msg)-grpcPrefixLength))
	for data := msg; len(data) > 0; {
		n := int64(min(len(data), c.maxFrame))
		n = min(n, c.connWin, c.streamWin)
		if n <= 0 { // wait for the server's WINDOW_UPDATE
			if err := c.flushControl(); err != nil {
				return err
			}
			// Not a reply to what we send: it may be in the socket already (see netconn.Flush).
			if err := c.nc.Flush(); err != nil {
				return c.fail(err)
			}
			if err := c.readFrame(); err != nil {
				return err
			}
			if c.done {
				return c.result()
			}
			continue
		}
		if err := c.fr.WriteData(id, int(n) == len(data), data[:n]); err != nil {
			return c.fail(err)
		}
		c.connWin -= n
		c.streamWin -= n
		data = data[n:]
	}
	for !c.done {
		if err := c.readFrame(); err != nil {
			return err
		}
	}
	return c.result()
}

// result turns the finished stream into the call's outcome.
func (c *conn) result() error {
	switch {
	case c.goAway && c.rst:
		return errGoAway
	case c.rst:
		return fmt.Errorf("etcd: stream reset by the server: %v", c.rstCode)
	case c.grpcStatus < 0:
		c.broken = true
		return fmt.Errorf("%w: reply without grpc-status (HTTP status %d)", errProtocol, c.httpStatus)
	case c.grpcStatus != 0:
		return newStatusError(c.grpcStatus, c.grpcMessage)
	}
	b := c.body
	if len(b) < grpcPrefixLength || b[0] != 0 || int(binary.BigEndian.Uint32(b[1:5])) != len(b)-grpcPrefixLength {
		c.broken = true
		return fmt.Errorf("%w: not one uncompressed gRPC message (%d bytes)", errProtocol, len(b))
	}
	c.msg = b[grpcPrefixLength:]
	return nil
}

func (c *conn) fail(err error) error {
	c.broken = true
	return err
}

// frame returns the next frame's header and payload, reading as needed.
func (c *conn) frame() (typ http2.FrameType, flags http2.Flags, stream uint32, payload []byte, err error) {
	if err := c.fill(9); err != nil {
		return 0, 0, 0, nil, err
	}
	h := c.rbuf[c.rpos : c.rpos+9]
	length := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
	if length > defaultFrame { // we never raise SETTINGS_MAX_FRAME_SIZE
		return 0, 0, 0, nil, c.fail(fmt.Errorf("%w: frame of %d bytes", errProtocol, length))
	}
	typ, flags, stream = http2.FrameType(h[3]), http2.Flags(h[4]), binary.BigEndian.Uint32(h[5:9])&(1<<31-1)
	if err := c.fill(9 + length); err != nil {
		return 0, 0, 0, nil, err
	}
	payload = c.rbuf[c.rpos+9 : c.rpos+9+length]
	c.rpos += 9 + length
	return typ, flags, stream, payload, nil
}

// fill makes sure n unparsed bytes are buffered.
func (c *conn) fill(n int) error {
	if c.rend-c.rpos >= n {
		return nil
	}
	if c.rpos+n > len(c.rbuf) {
		c.rend = copy(c.rbuf, c.rbuf[c.rpos:c.rend])
		c.rpos = 0
	}
	for c.rend-c.rpos < n {
		k, err := c.nc.Read(c.rbuf[c.rend:])
		c.rend += k
		if err != nil && c.rend-c.rpos < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return c.fail(err)
		}
	}
	return nil
}

// readFrame reads one frame and acts on it.
func (c *conn) readFrame() error {
	typ, flags, stream, p, err := c.frame()
	if err != nil {
		return err
	}
	switch typ {
	case http2.FrameData:
		c.recvUnacked += int64(len(p))
		if p, err = unpad(flags, p); err != nil {
			return c.fail(err)
		}
		if stream == c.stream && !c.done {
			c.body = append(c.body, p...)
			if flags.Has(http2.FlagDataEndStream) {
				c.done = true // no trailers: result reports the missing grpc-status
			}
		}
	case http2.FrameHeaders:
		if p, err = unpad(flags, p); err != nil {
			return c.fail(err)
		}
		if flags.Has(http2.FlagHeadersPriority) {
			if len(p) < 5 {
				return c.fail(fmt.Errorf("%w: short HEADERS frame", errProtocol))
			}
			p = p[5:]
		}
		if !flags.Has(http2.FlagHeadersEndHeaders) {
			c.hblock, c.hstream = append(c.hblock[:0], p...), stream
			if flags.Has(http2.FlagHeadersEndStream) {
				c.hstream |= 1 << 31 // remember END_STREAM until the last CONTINUATION
			}
			return nil
		}
		return c.headers(stream, flags.Has(http2.FlagHeadersEndStream), p)
	case http2.FrameContinuation:
		if stream != c.hstream&(1<<31-1) || len(c.hblock) == 0 {
			return c.fail(fmt.Errorf("%w: unexpected CONTINUATION", errProtocol))
		}
		c.hblock = append(c.hblock, p...)
		if flags.Has(http2.FlagContinuationEndHeaders) {
			block := c.hblock
			c.hblock = c.hblock[:0]
			return c.headers(stream, c.hstream&(1<<31) != 0, block)
		}
	case http2.FrameSettings:
		if flags.Has(http2.FlagSettingsAck) {
			return nil
		}
		return c.settings(p)
	case http2.FramePing:
		if !flags.Has(http2.FlagPingAck) && len(p) == 8 {
			c.pingAcks = append(c.pingAcks, [8]byte(p))
		}
	case http2.FrameWindowUpdate:
		if len(p) != 4 {
			return c.fail(fmt.Errorf("%w: WINDOW_UPDATE of %d bytes", errProtocol, len(p)))
		}
		incr := int64(binary.BigEndian.Uint32(p) & (1<<31 - 1))
		if stream == 0 {
			c.connWin += incr
		} else if stream == c.stream {
			c.streamWin += incr
		}
	case http2.FrameRSTStream:
		if stream == c.stream && !c.done && len(p) == 4 {
			c.rst, c.rstCode, c.done = true, http2.ErrCode(binary.BigEndian.Uint32(p)), true
		}
	case http2.FrameGoAway:
		c.broken, c.goAway = true, true
		if len(p) >= 8 && binary.BigEndian.Uint32(p)&(1<<31-1) < c.stream && !c.done {
			c.rst, c.done = true, true // not processed
		}
	}
	return nil // PRIORITY, PUSH_PROMISE (disabled), unknown types: ignored
}

// unpad strips a PADDED frame's padding.
func unpad(flags http2.Flags, p []byte) ([]byte, error) {
	if !flags.Has(http2.FlagDataPadded) { // the same bit for HEADERS
		return p, nil
	}
	if len(p) < 1 || int(p[0]) > len(p)-1 {
		return nil, fmt.Errorf("%w: bad padding", errProtocol)
	}
	return p[1 : len(p)-int(p[0])], nil
}

// headers decodes a complete header block: every block, of any stream, goes through the
// decoder, whose dynamic table is the connection's.
func (c *conn) headers(stream uint32, endStream bool, block []byte) error {
	c.decodingCur = stream == c.stream && !c.done
	if _, err := c.dec.Write(block); err != nil {
		return c.fail(fmt.Errorf("%w: header block: %v", errProtocol, err))
	}
	if err := c.dec.Close(); err != nil {
		return c.fail(fmt.Errorf("%w: header block: %v", errProtocol, err))
	}
	if c.decodingCur {
		c.sawHeaders = true
		if endStream {
			c.done = true
		}
	}
	c.decodingCur = false
	return nil
}

// onField is the decoder's emit function (a method value made once).
func (c *conn) onField(f hpack.HeaderField) {
	if !c.decodingCur {
		return
	}
	switch f.Name {
	case ":status":
		c.httpStatus = atoi(f.Value)
	case "grpc-status":
		c.grpcStatus = atoi(f.Value)
	case "grpc-message":
		c.grpcMessage = append(c.grpcMessage[:0], f.Value...)
	}
}

// atoi parses a small decimal number without allocating; -1 if s is not one.
func atoi(s string) int {
	if s == "" || len(s) > 9 {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// settings applies the server's SETTINGS and queues their acknowledgement.
func (c *conn) settings(p []byte) error {
	if len(p)%6 != 0 {
		return c.fail(fmt.Errorf("%w: SETTINGS of %d bytes", errProtocol, len(p)))
	}
	for ; len(p) > 0; p = p[6:] {
		v := binary.BigEndian.Uint32(p[2:6])
		switch http2.SettingID(binary.BigEndian.Uint16(p[:2])) {
		case http2.SettingInitialWindowSize:
			if v > 1<<31-1 {
				return c.fail(fmt.Errorf("%w: initial window %d", errProtocol, v))
			}
			c.streamWin += int64(v) - c.peerInitWin
			c.peerInitWin = int64(v)
		case http2.SettingMaxFrameSize:
			if v < defaultFrame || v > 1<<24-1 {
				return c.fail(fmt.Errorf("%w: max frame size %d", errProtocol, v))
			}
			c.maxFrame = int(v)
		}
	}
	c.settingsAcks++
	return nil
}

// flushControl queues the control frames owed to the server: SETTINGS and PING
// acknowledgements and the connection's WINDOW_UPDATE. They wait for the next request (or a
// wait for the server's window) instead of going out when their frame is read, because of how
// netconn.Conn sends: a write queued before a Read is sent by that Read, which then waits for
// the socket to become readable again, and in the middle of a reply the rest of it may already
// be in the socket — a wait that would never end. Before a request, or while our DATA waits
// for a window, what we wait for comes after what we send. The cost: a PING is answered at the
// next call (grpc-go's server pings to estimate the bandwidth-delay product, and measures a
// longer round trip; its keepalive ping, every 2 h by default, may find an idle connection
// unanswered, and the connection is then replaced).
func (c *conn) flushControl() error {
	for ; c.settingsAcks > 0; c.settingsAcks-- {
		if err := c.fr.WriteSettingsAck(); err != nil {
			return c.fail(err)
		}
	}
	for _, d := range c.pingAcks {
		if err := c.fr.WritePing(true, d); err != nil {
			return c.fail(err)
		}
	}
	c.pingAcks = c.pingAcks[:0]
	if c.recvUnacked >= recvWindow/2 {
		if err := c.fr.WriteWindowUpdate(0, uint32(c.recvUnacked)); err != nil {
			return c.fail(err)
		}
		c.recvUnacked = 0
	}
	return nil
}

// close closes the connection, sending what is queued if the socket takes it at once.
func (c *conn) close() { _ = c.nc.Close() }
