package mongodb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/boxbench/boxbench/driver/internal/netconn"
)

// The message layer: OP_MSG (opcode 2013), the only message MongoDB 6+ and FerretDB answer
// every command with. A message is a 16-byte header (messageLength, requestID, responseTo,
// opCode; little-endian int32s), a uint32 of flag bits, then sections: kind 0 is the command's
// body, one BSON document; kind 1 is a document sequence (int32 size, a C-string identifier
// such as "documents", then BSON documents back to back), which carries an insert's documents
// and an update's statements outside the body, as the official driver sends them.
//
// The client never sets moreToCome (every request gets its reply) or exhaustAllowed, and sends
// no checksum; a reply's checksum, if the server adds one, is skipped, not verified (TCP's
// own checksums cover loopback and bridges).

const (
	opMsg         = 2013
	headerLen     = 16
	flagChecksum  = 1 << 0
	flagMoreToCom = 1 << 1
	// defaultMaxMessage is MongoDB's maxMessageSizeBytes, used until hello says otherwise.
	defaultMaxMessage = 48_000_000
	// minMessage is the smallest OP_MSG: header, flags, kind byte, an empty document.
	minMessage = headerLen + 4 + 1 + 5
)

// errProtocol is a reply the client cannot read: the connection is broken afterwards.
var errProtocol = errors.New("mongodb: protocol error")

// conn is one connection: requests are built into wbuf (reused), replies are read into rbuf
// (reused, grown to the largest reply) and read in place with bsoncore, so that an operation
// allocates nothing. Used by one operation at a time.
type conn struct {
	nc     *netconn.Conn
	wbuf   []byte
	rbuf   []byte
	w      int // rbuf[:w] holds the reply read so far
	reqID  int32
	broken bool // an I/O or protocol error left the stream in an unknown state

	// The server's limits from hello.
	maxMessage int
	maxBatch   int

	body int32 // where the body document being built starts in wbuf
	seq  int32 // where the open document sequence's size is, or -1
}

func newConn(nc *netconn.Conn) *conn {
	return &conn{nc: nc, wbuf: make([]byte, 0, 4<<10), rbuf: make([]byte, 16<<10),
		maxMessage: defaultMaxMessage, maxBatch: 100_000, seq: -1}
}

// begin starts a message and its body (section kind 0); the caller appends the body's
// elements (the command name first) with bsoncore's Append*Element functions to c.wbuf.
func (c *conn) begin() {
	c.wbuf = append(c.wbuf[:0], make([]byte, headerLen)...) // no allocation: a constant-size zero append
	c.wbuf = binary.LittleEndian.AppendUint32(c.wbuf, 0)    // flag bits
	c.wbuf = append(c.wbuf, 0)                              // section kind 0
	c.body, c.wbuf = bsoncore.AppendDocumentStart(c.wbuf)
	c.seq = -1
}

// endBody closes the body document; document sequences may follow.
func (c *conn) endBody() {
	c.wbuf, _ = bsoncore.AppendDocumentEnd(c.wbuf, c.body) // cannot fail: body is in range
}

// beginSequence starts a document sequence (section kind 1) named id, after endBody; the
// caller appends whole documents to it.
func (c *conn) beginSequence(id string) {
	c.wbuf = append(c.wbuf, 1)
	c.seq = int32(len(c.wbuf))
	c.wbuf = append(c.wbuf, 0, 0, 0, 0)
	c.wbuf = append(c.wbuf, id...)
	c.wbuf = append(c.wbuf, 0)
}

// finish closes the open sequence, if any, and fills in the header: the next request id,
// the message's length.
func (c *conn) finish() {
	if c.seq >= 0 {
		binary.LittleEndian.PutUint32(c.wbuf[c.seq:], uint32(len(c.wbuf)-int(c.seq)))
		c.seq = -1
	}
	c.reqID++
	if c.reqID <= 0 { // wrapped: request ids are positive
		c.reqID = 1
	}
	binary.LittleEndian.PutUint32(c.wbuf[0:], uint32(len(c.wbuf)))
	binary.LittleEndian.PutUint32(c.wbuf[4:], uint32(c.reqID))
	binary.LittleEndian.PutUint32(c.wbuf[8:], 0)
	binary.LittleEndian.PutUint32(c.wbuf[12:], opMsg)
}

// exchange sends the finished message and returns the reply's body, which stays valid until
// the next exchange. An I/O or protocol error marks the connection broken.
func (c *conn) exchange() (bsoncore.Document, error) {
	if len(c.wbuf) > c.maxMessage {
		return nil, fmt.Errorf("mongodb: message of %d bytes is larger than the server's maximum %d", len(c.wbuf), c.maxMessage)
	}
	_, err := c.nc.Write(c.wbuf)
	if err == nil {
		var body bsoncore.Document
		if body, err = c.readReply(); err == nil {
			return body, nil
		}
	}
	c.broken = true
	return nil, err
}

// readReply reads one OP_MSG reply to the last request and returns its body.
func (c *conn) readReply() (bsoncore.Document, error) {
	c.w = 0 // one request, one reply: nothing unread remains between exchanges
	if err := c.fill(headerLen); err != nil {
		return nil, err
	}
	size := int(int32(binary.LittleEndian.Uint32(c.rbuf)))
	if size < minMessage || size > max(c.maxMessage, defaultMaxMessage) {
		return nil, fmt.Errorf("%w: reply length %d", errProtocol, size)
	}
	if err := c.fill(size); err != nil {
		return nil, err
	}
	if c.w > size { // requests are never pipelined: nothing may follow the reply
		return nil, fmt.Errorf("%w: %d bytes after the reply", errProtocol, c.w-size)
	}
	return parseReply(c.rbuf[:size], c.reqID)
}

// parseReply checks one whole reply message to request reqID and returns its body.
func parseReply(m []byte, reqID int32) (bsoncore.Document, error) {
	if len(m) < minMessage || int(binary.LittleEndian.Uint32(m)) != len(m) {
		return nil, fmt.Errorf("%w: truncated reply", errProtocol)
	}
	if op := binary.LittleEndian.Uint32(m[12:]); op != opMsg {
		return nil, fmt.Errorf("%w: reply opcode %d, want %d (OP_MSG)", errProtocol, op, opMsg)
	}
	if to := int32(binary.LittleEndian.Uint32(m[8:])); to != reqID {
		return nil, fmt.Errorf("%w: reply to request %d, want %d", errProtocol, to, reqID)
	}
	flags := binary.LittleEndian.Uint32(m[headerLen:])
	if flags&flagMoreToCom != 0 {
		return nil, fmt.Errorf("%w: moreToCome reply to a request that did not allow it", errProtocol)
	}
	if unknown := flags & 0xffff &^ (flagChecksum | flagMoreToCom); unknown != 0 {
		// Bits 0–15 must be understood (bits 16–31 may be ignored); only two are defined.
		return nil, fmt.Errorf("%w: unknown required flag bits %#x", errProtocol, unknown)
	}
	secs := m[headerLen+4:]
	if flags&flagChecksum != 0 {
		if len(secs) < 4 {
			return nil, fmt.Errorf("%w: truncated checksum", errProtocol)
		}
		secs = secs[:len(secs)-4]
	}
	var body bsoncore.Document
	for len(secs) > 0 {
		kind := secs[0]
		secs = secs[1:]
		var n int
		switch kind {
		case 0:
			doc, rest, ok := bsoncore.ReadDocument(secs)
			if !ok || len(doc) < 5 || doc[len(doc)-1] != 0 {
				return nil, fmt.Errorf("%w: malformed body", errProtocol)
			}
			if body != nil {
				return nil, fmt.Errorf("%w: two bodies in one reply", errProtocol)
			}
			body, n = doc, len(secs)-len(rest)
		case 1: // a document sequence: not in replies to the commands sent here; skipped
			if len(secs) < 4 {
				return nil, fmt.Errorf("%w: truncated document sequence", errProtocol)
			}
			n = int(int32(binary.LittleEndian.Uint32(secs)))
			if n < 4 || n > len(secs) {
				return nil, fmt.Errorf("%w: document sequence length %d", errProtocol, n)
			}
		default:
			return nil, fmt.Errorf("%w: section kind %d", errProtocol, kind)
		}
		secs = secs[n:]
	}
	if body == nil {
		return nil, fmt.Errorf("%w: reply without a body", errProtocol)
	}
	return body, nil
}

// fill reads until rbuf holds at least n bytes, growing it if it is smaller.
func (c *conn) fill(n int) error {
	if n > len(c.rbuf) {
		c.rbuf = append(c.rbuf[:c.w], make([]byte, n-c.w)...)
		c.rbuf = c.rbuf[:cap(c.rbuf)]
	}
	for c.w < n {
		m, err := c.nc.Read(c.rbuf[c.w:])
		c.w += m
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			if c.w >= n {
				break
			}
			return err
		}
	}
	return nil
}
