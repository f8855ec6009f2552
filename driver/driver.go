// Package driver holds the database clients the built-in YCSB generator drives.
//
// A driver executes operations and reports their outcome; it never times itself: the generator
// owns the clock (intended start time, service time), so every database is measured the same way.
package driver

import (
	"context"
	"errors"
	"fmt"
)

// Endpoint is how a client reaches a database server. Exactly one of (Host, Port) or Unix is
// used: Unix (a socket path) wins when it is set.
type Endpoint struct {
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	Unix string `json:"unix,omitempty"`
	// Members are every node a client of a cluster may use, this endpoint first (package
	// cluster); empty for one server. A driver that cannot spread over them uses Host and Port.
	Members []Endpoint `json:"members,omitempty"`
}

// String returns the endpoint as host:port or unix:PATH, for logs and stored records.
func (e Endpoint) String() string {
	if e.Unix != "" {
		return "unix:" + e.Unix
	}
	return fmt.Sprintf("%s:%d", e.Host, e.Port)
}

// Address is the network and address to dial e with (net.Dial's arguments): its unix socket
// when it has one, else TCP to host:port.
func (e Endpoint) Address() (network, addr string) {
	if e.Unix != "" {
		return "unix", e.Unix
	}
	return "tcp", e.String()
}

// Credentials are who a client authenticates as: the other half of how it connects, beside
// the Endpoint. A database's description fills them (dbms.DBMS.Client: its user and database,
// and the run's password); a driver uses what it is given and adds no defaults of its own.
type Credentials struct {
	User     string
	Password string
	Database string
}

// Table is the YCSB data model every driver implements: a table named Name whose rows have a
// key and FieldCount string fields named FIELD0..FIELDn-1 (SQL: a usertable with YCSB_KEY and
// FIELD0..n; Redis: one hash per key).
type Table struct {
	Name       string
	FieldCount int
}

// Fields returns the field names FIELD0..FIELDn-1.
func (t Table) Fields() []string {
	f := make([]string, t.FieldCount)
	for i := range f {
		f[i] = fmt.Sprintf("FIELD%d", i)
	}
	return f
}

// DB is one database connection pool shared by the workers of one generator.
//
// Contract:
//   - Open (in the implementation's constructor) does not create the table; Setup does, and Setup
//     is called once per load, before any Insert.
//   - Every method except Close is safe for concurrent use by many workers.
//   - Methods return ErrNotFound when the key does not exist; any other error is a failed
//     operation and is counted by its kind (see ErrorKind).
//   - Implementations must not allocate per call where the client library allows it; the values
//     slices passed in are owned by the caller and must not be retained after the call returns.
type DB interface {
	// Setup creates (or recreates) the table, empty.
	Setup(ctx context.Context, t Table) error
	// Read fetches the named fields of key (all fields when fields is nil).
	Read(ctx context.Context, key string, fields []string) error
	// Scan reads count records starting at key, in key order.
	Scan(ctx context.Context, key string, count int, fields []string) error
	// Update sets the given fields of key; fields and values have the same length.
	Update(ctx context.Context, key string, fields []string, values [][]byte) error
	// Insert adds one record.
	Insert(ctx context.Context, key string, fields []string, values [][]byte) error
	// BatchInsert adds several records in one round trip where the database allows it.
	BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error
	// Close releases every connection. Idempotent.
	Close() error
}

// ErrNotFound is returned by Read, Update and Scan when the key is absent.
var ErrNotFound = errors.New("record not found")

// ErrUnsupported is returned for an operation the database binding cannot perform.
var ErrUnsupported = errors.New("operation not supported by this database binding")

// RetryableWrite is implemented by a database's answer that a write is not known to have been
// applied only because the database was slow or short of replicas (Cassandra's write timeout,
// unavailable, overloaded): the same write, an idempotent insert of the load, may be sent again.
// The measured phase never retries (such an error counts, by its kind).
type RetryableWrite interface {
	RetryableWrite() bool
}

// IsRetryableWrite says whether err, or an error it wraps, is a RetryableWrite that says so.
func IsRetryableWrite(err error) bool {
	var r RetryableWrite
	return errors.As(err, &r) && r.RetryableWrite()
}
