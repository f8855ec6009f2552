// Package cql encodes and decodes the frames of Cassandra's native protocol, version 4, for
// boxbench's own CQL client (driver/cassandra): the requests it sends (STARTUP, AUTH_RESPONSE,
// OPTIONS, QUERY, PREPARE, EXECUTE, BATCH), the responses it reads (READY, AUTHENTICATE,
// AUTH_SUCCESS, SUPPORTED, RESULT, ERROR) and the token of a partition key
// (Murmur3Partitioner).
//
// Encoding appends to a caller's buffer and decoding reads views of the caller's buffer, so
// that a client that reuses its buffers allocates nothing per request; only errors allocate.
//
// Why version 4: Cassandra 5.0 speaks v3 to v5, and v5 wraps every frame after STARTUP in
// checksummed segments (a CRC24 header and a CRC32 payload trailer), which costs CPU on both
// ends and code here without changing what a benchmark measures; v4 frames are sent as they
// are, and v4 has everything the YCSB binding needs (prepared statements, skip_metadata,
// unset-free values, warnings).
package cql

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// HeaderLen is the length of a v4 frame header.
const HeaderLen = 9

// Version is the protocol version this package speaks; a response has the high bit set.
const (
	Version         = 0x04
	responseVersion = 0x80 | Version
)

// Opcodes.
const (
	OpError         byte = 0x00
	OpStartup       byte = 0x01
	OpReady         byte = 0x02
	OpAuthenticate  byte = 0x03
	OpOptions       byte = 0x05
	OpSupported     byte = 0x06
	OpQuery         byte = 0x07
	OpResult        byte = 0x08
	OpPrepare       byte = 0x09
	OpExecute       byte = 0x0A
	OpBatch         byte = 0x0D
	OpAuthChallenge byte = 0x0E
	OpAuthResponse  byte = 0x0F
	OpAuthSuccess   byte = 0x10
)

// Header flags of a response.
const (
	flagCompression   = 0x01
	flagTracing       = 0x02
	flagCustomPayload = 0x04
	flagWarning       = 0x08
)

// MaxFrame bounds a response body (Cassandra's own native_transport_max_frame_size default is
// 16 MiB); a longer length is a protocol error, not an allocation.
const MaxFrame = 256 << 20

// ErrProtocol is wrapped by every malformed or unexpected frame.
var ErrProtocol = errors.New("cql protocol error")

// Header is a frame header.
type Header struct {
	Version byte
	Flags   byte
	Stream  int16
	Op      byte
	Length  int
}

// ParseHeader decodes a response header from the first HeaderLen bytes of b.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("%w: short header", ErrProtocol)
	}
	h := Header{Version: b[0], Flags: b[1], Stream: int16(binary.BigEndian.Uint16(b[2:])), Op: b[4],
		Length: int(int32(binary.BigEndian.Uint32(b[5:])))}
	if h.Version != responseVersion {
		return h, fmt.Errorf("%w: frame version 0x%02x, want 0x%02x (protocol v4)", ErrProtocol, h.Version, responseVersion)
	}
	if h.Length < 0 || h.Length > MaxFrame {
		return h, fmt.Errorf("%w: frame length %d", ErrProtocol, h.Length)
	}
	if h.Flags&flagCompression != 0 {
		return h, fmt.Errorf("%w: compressed frame (none was negotiated)", ErrProtocol)
	}
	return h, nil
}

// Body returns the message of a response body: after the tracing id, the warnings and the
// custom payload that its header's flags announce (boxbench reads none of them).
func Body(h Header, body []byte) ([]byte, error) {
	r := Reader{B: body}
	if h.Flags&flagTracing != 0 {
		r.Skip(16)
	}
	if h.Flags&flagWarning != 0 {
		for n := r.Short(); n > 0 && r.Err == nil; n-- {
			r.String()
		}
	}
	if h.Flags&flagCustomPayload != 0 {
		for n := r.Short(); n > 0 && r.Err == nil; n-- {
			r.String()
			r.Bytes()
		}
	}
	return r.B, r.Err
}

// Begin appends a request header for opcode op on stream, with the length left to End, and
// returns the buffer and where the frame starts.
func Begin(b []byte, stream int16, op byte) ([]byte, int) {
	start := len(b)
	return append(b, Version, 0, byte(uint16(stream)>>8), byte(stream), op, 0, 0, 0, 0), start
}

// End writes the length of the frame that starts at start.
func End(b []byte, start int) []byte {
	binary.BigEndian.PutUint32(b[start+5:], uint32(len(b)-start-HeaderLen))
	return b
}

// AppendShort appends a [short].
func AppendShort(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }

// AppendInt appends an [int].
func AppendInt(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }

// AppendString appends a [string] (a short length).
func AppendString(b []byte, s string) []byte {
	return append(AppendShort(b, uint16(len(s))), s...)
}

// AppendLongString appends a [long string] (an int length).
func AppendLongString(b []byte, s string) []byte {
	return append(AppendInt(b, int32(len(s))), s...)
}

// AppendBytes appends [bytes]; nil is a null value.
func AppendBytes(b, v []byte) []byte {
	if v == nil {
		return AppendInt(b, -1)
	}
	return append(AppendInt(b, int32(len(v))), v...)
}

// AppendStringValue appends a string as a [bytes] value (a varchar).
func AppendStringValue(b []byte, s string) []byte {
	return append(AppendInt(b, int32(len(s))), s...)
}

// AppendIntValue appends a CQL int as a [bytes] value.
func AppendIntValue(b []byte, v int32) []byte { return AppendInt(AppendInt(b, 4), v) }

// AppendShortBytes appends [short bytes].
func AppendShortBytes(b, v []byte) []byte {
	return append(AppendShort(b, uint16(len(v))), v...)
}

// AppendStartup appends a STARTUP with CQL version 3.0.0 and no compression.
func AppendStartup(b []byte, stream int16) []byte {
	b, s := Begin(b, stream, OpStartup)
	b = AppendShort(b, 1)
	b = AppendString(b, "CQL_VERSION")
	b = AppendString(b, "3.0.0")
	return End(b, s)
}

// AppendOptions appends an OPTIONS.
func AppendOptions(b []byte, stream int16) []byte {
	b, s := Begin(b, stream, OpOptions)
	return End(b, s)
}

// AppendAuthResponse appends an AUTH_RESPONSE with SASL PLAIN's token for user and password
// (PasswordAuthenticator's mechanism: NUL, user, NUL, password).
func AppendAuthResponse(b []byte, stream int16, user, password string) []byte {
	b, s := Begin(b, stream, OpAuthResponse)
	b = AppendInt(b, int32(2+len(user)+len(password)))
	b = append(b, 0)
	b = append(b, user...)
	b = append(b, 0)
	b = append(b, password...)
	return End(b, s)
}

// AppendQuery appends a QUERY of q with no bound values at consistency cl.
func AppendQuery(b []byte, stream int16, q string, cl Consistency) []byte {
	b, s := Begin(b, stream, OpQuery)
	b = AppendLongString(b, q)
	b = AppendShort(b, uint16(cl))
	b = append(b, 0) // no flags
	return End(b, s)
}

// AppendPrepare appends a PREPARE of q.
func AppendPrepare(b []byte, stream int16, q string) []byte {
	b, s := Begin(b, stream, OpPrepare)
	b = AppendLongString(b, q)
	return End(b, s)
}

// Query parameter flags.
const (
	qfValues       = 0x01
	qfSkipMetadata = 0x02
)

// AppendExecute appends an EXECUTE of the prepared statement id at consistency cl with n
// bound values already encoded (each a [bytes]) in values. It asks the server to skip the
// result metadata: the client reads only the row count.
func AppendExecute(b []byte, stream int16, id []byte, cl Consistency, n int, values []byte) []byte {
	b, s := Begin(b, stream, OpExecute)
	b = AppendShortBytes(b, id)
	b = AppendShort(b, uint16(cl))
	flags := byte(qfSkipMetadata)
	if n > 0 {
		flags |= qfValues
	}
	b = append(b, flags)
	if n > 0 {
		b = AppendShort(b, uint16(n))
		b = append(b, values...)
	}
	return End(b, s)
}

// BatchUnlogged is the batch type of a batch with no batch log (no atomicity across
// partitions, as YCSB's binding needs none).
const BatchUnlogged = 1

// BeginBatch appends the start of a BATCH of n statements; add each with AppendBatchExecute,
// then finish with EndBatch.
func BeginBatch(b []byte, stream int16, typ byte, n int) ([]byte, int) {
	b, s := Begin(b, stream, OpBatch)
	b = append(b, typ)
	return AppendShort(b, uint16(n)), s
}

// AppendBatchExecute appends one prepared statement of a batch with n values encoded in
// values.
func AppendBatchExecute(b []byte, id []byte, n int, values []byte) []byte {
	b = append(b, 1) // kind: prepared
	b = AppendShortBytes(b, id)
	b = AppendShort(b, uint16(n))
	return append(b, values...)
}

// EndBatch appends the batch's consistency (no flags) and ends the frame.
func EndBatch(b []byte, start int, cl Consistency) []byte {
	b = AppendShort(b, uint16(cl))
	b = append(b, 0)
	return End(b, start)
}
