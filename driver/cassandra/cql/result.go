package cql

import (
	"fmt"
	"strings"
)

// Error codes of an ERROR response (native protocol v4, section 9).
const (
	CodeServer          = 0x0000
	CodeProtocol        = 0x000A
	CodeBadCredentials  = 0x0100
	CodeUnavailable     = 0x1000
	CodeOverloaded      = 0x1001
	CodeBootstrapping   = 0x1002
	CodeTruncate        = 0x1003
	CodeWriteTimeout    = 0x1100
	CodeReadTimeout     = 0x1200
	CodeReadFailure     = 0x1300
	CodeFunctionFailure = 0x1400
	CodeWriteFailure    = 0x1500
	CodeSyntax          = 0x2000
	CodeUnauthorized    = 0x2100
	CodeInvalid         = 0x2200
	CodeConfig          = 0x2300
	CodeAlreadyExists   = 0x2400
	CodeUnprepared      = 0x2500
)

var codeNames = map[int32]string{
	CodeServer: "server error", CodeProtocol: "protocol error", CodeBadCredentials: "bad credentials",
	CodeUnavailable: "unavailable", CodeOverloaded: "overloaded", CodeBootstrapping: "bootstrapping",
	CodeTruncate: "truncate error", CodeWriteTimeout: "write timeout", CodeReadTimeout: "read timeout",
	CodeReadFailure: "read failure", CodeFunctionFailure: "function failure", CodeWriteFailure: "write failure",
	CodeSyntax: "syntax error", CodeUnauthorized: "unauthorized", CodeInvalid: "invalid",
	CodeConfig: "config error", CodeAlreadyExists: "already exists", CodeUnprepared: "unprepared",
}

// Error is an ERROR response: the server's code and message. It implements net.Error:
// Timeout is true for the server's read and write timeouts (the replicas did not answer in
// time), so that a generator counts them as timeouts; Temporary is true for those and for
// unavailable and overloaded (a later attempt may succeed).
type Error struct {
	Code    int32
	Message string
	// ID is the statement id of an UNPREPARED error.
	ID []byte
}

func (e *Error) Error() string {
	name := codeNames[e.Code]
	if name == "" {
		name = "error"
	}
	return fmt.Sprintf("%s (0x%04x): %s", name, e.Code, e.Message)
}

// IsUnprepared says err is the server's UNPREPARED error (an Error, as the reader returns it,
// never wrapped): the statement must be prepared again.
func IsUnprepared(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Code == CodeUnprepared
}

// Timeout says the replicas did not answer in time (read or write timeout).
func (e *Error) Timeout() bool { return e.Code == CodeReadTimeout || e.Code == CodeWriteTimeout }

// Temporary says a later attempt may succeed.
func (e *Error) Temporary() bool {
	return e.Timeout() || e.Code == CodeUnavailable || e.Code == CodeOverloaded
}

// RetryableWrite says the write may be sent again (driver.RetryableWrite): Cassandra's writes
// are upserts, and a timeout, an unavailable or an overloaded coordinator leave it unapplied or
// applied in full.
func (e *Error) RetryableWrite() bool { return e.Temporary() }

// ParseError decodes an ERROR body (allocates: an error is off the hot path).
func ParseError(body []byte) *Error {
	r := Reader{B: body}
	e := &Error{Code: r.Int(), Message: strings.Clone(string(r.String()))}
	if e.Code == CodeUnprepared {
		e.ID = append([]byte(nil), r.ShortBytes()...)
	}
	if r.Err != nil {
		e.Message += fmt.Sprintf(" [%v]", r.Err)
	}
	return e
}

// Result kinds.
const (
	ResultVoid         = 0x0001
	ResultRows         = 0x0002
	ResultSetKeyspace  = 0x0003
	ResultPrepared     = 0x0004
	ResultSchemaChange = 0x0005
)

// Rows metadata flags.
const (
	mfGlobalTableSpec = 0x0001
	mfHasMorePages    = 0x0002
	mfNoMetadata      = 0x0004
)

// Rows reads a Rows result's metadata from r (positioned after the kind) and returns its
// column count and row count; r is left at the first row, each row being cols [bytes]
// values. It does not allocate.
func Rows(r *Reader) (cols, rows int, err error) {
	flags := r.Int()
	cols = int(r.Int())
	if flags&mfHasMorePages != 0 {
		r.Bytes()
	}
	if flags&mfNoMetadata == 0 {
		global := flags&mfGlobalTableSpec != 0
		if global {
			r.String()
			r.String()
		}
		for i := 0; i < cols && r.Err == nil; i++ {
			if !global {
				r.String()
				r.String()
			}
			r.String()
			r.option(0)
		}
	}
	rows = int(r.Int())
	if r.Err == nil && (cols < 0 || rows < 0) {
		r.Err = fmt.Errorf("%w: %d columns, %d rows", ErrProtocol, cols, rows)
	}
	return cols, rows, r.Err
}

// Prepared reads a Prepared result (r positioned after the kind) and returns the statement
// id, a view of r's buffer; the rest (bind and result metadata) is not needed by a client
// that knows its statements and skips result metadata.
func Prepared(r *Reader) ([]byte, error) {
	id := r.ShortBytes()
	if r.Err == nil && len(id) == 0 {
		r.Err = fmt.Errorf("%w: empty prepared statement id", ErrProtocol)
	}
	return id, r.Err
}

// Collection reads the elements of a list or set value (an [int] count, then each a [bytes]),
// calling fn with a view of each.
func Collection(v []byte, fn func([]byte)) error {
	r := Reader{B: v}
	for n := r.Int(); n > 0 && r.Err == nil; n-- {
		e := r.Bytes()
		if r.Err == nil {
			fn(e)
		}
	}
	return r.Err
}
