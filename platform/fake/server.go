package fake

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boxbench/boxbench/driver"
)

// server is a box's database: rows in memory behind net/rpc on a loopback port, so that the
// built-in generator drives it through a driver (Open) like any other, from this process or
// from an agent in a child process (a duet's pinned client).
type server struct {
	ln       net.Listener
	password string
	fault    func(op string) error // Options.Fault for the server's operations
	done     chan struct{}

	connMu sync.Mutex
	conns  map[net.Conn]bool // nil once stopped

	mu   sync.RWMutex
	rows map[string]map[string][]byte
	size atomic.Int64 // bytes of the values stored
	ops  atomic.Int64 // operations served
}

// serve listens on 127.0.0.1:port (0: a port of the kernel's choice) and serves rows.
func serve(port int, password string, rows map[string]map[string][]byte, fault func(string) error) (*server, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	s := &server{ln: ln, password: password, fault: fault, rows: rows, done: make(chan struct{}), conns: map[net.Conn]bool{}}
	for _, r := range rows {
		for _, v := range r {
			s.size.Add(int64(len(v)))
		}
	}
	rs := rpc.NewServer()
	if err := rs.RegisterName("DB", &service{s}); err != nil {
		_ = ln.Close()
		return nil, err
	}
	go func() {
		defer close(s.done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return // stopped
			}
			if !s.track(conn) {
				return
			}
			go rs.ServeConn(conn)
		}
	}()
	return s, nil
}

// track adds an accepted connection to those stop closes; false once stopped.
func (s *server) track(c net.Conn) bool {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.conns == nil {
		_ = c.Close()
		return false
	}
	s.conns[c] = true
	return true
}

func (s *server) endpoint() driver.Endpoint {
	a := s.ln.Addr().(*net.TCPAddr)
	return driver.Endpoint{Host: "127.0.0.1", Port: a.Port}
}

// stop closes the listener and every connection: the server answers no more, as a stopped
// one. Idempotent.
func (s *server) stop() {
	_ = s.ln.Close()
	<-s.done
	s.connMu.Lock()
	defer s.connMu.Unlock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

// snapshot copies the rows (for Capture).
func (s *server) snapshot() map[string]map[string][]byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]map[string][]byte, len(s.rows))
	for k, r := range s.rows {
		out[k] = r
	}
	return out
}

// Args is one operation of the wire protocol.
type Args struct {
	Password string
	Op       string // "ping", "setup", "read", "scan", "update", "insert"
	Keys     []string
	Fields   []string
	Values   [][][]byte // per key
	Count    int
}

// service is the rpc receiver.
type service struct{ s *server }

// Do performs one operation; reply is the number of rows it touched.
func (v *service) Do(a Args, reply *int) error {
	s := v.s
	if a.Password != s.password {
		return errors.New("fake: wrong password")
	}
	if s.fault != nil {
		if err := s.fault(a.Op); err != nil {
			return err
		}
	}
	s.ops.Add(1)
	switch a.Op {
	case "ping":
	case "setup":
		s.mu.Lock()
		s.rows = map[string]map[string][]byte{}
		s.size.Store(0)
		s.mu.Unlock()
	case "read":
		s.mu.RLock()
		_, ok := s.rows[a.Keys[0]]
		s.mu.RUnlock()
		if !ok {
			return errNotFound
		}
		*reply = 1
	case "scan":
		s.mu.RLock()
		for k := range s.rows {
			if k >= a.Keys[0] && *reply < a.Count {
				*reply++
			}
		}
		s.mu.RUnlock()
	case "update", "insert":
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, k := range a.Keys {
			r := s.rows[k]
			if r == nil {
				if a.Op == "update" {
					return errNotFound
				}
				r = map[string][]byte{}
			} else {
				r = cloneRow(r) // rows are shared with snapshots: copy on write
			}
			for j, f := range a.Fields {
				s.size.Add(int64(len(a.Values[i][j]) - len(r[f])))
				r[f] = slices.Clone(a.Values[i][j])
			}
			s.rows[k] = r
			*reply++
		}
	default:
		return fmt.Errorf("fake: unknown operation %q", a.Op)
	}
	return nil
}

func cloneRow(r map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// errNotFound crosses the wire as its text; the driver turns it back into driver.ErrNotFound.
var errNotFound = errors.New("fake: not found")

// call dials ep and performs one operation, bounded by ctx.
func call(ctx context.Context, ep driver.Endpoint, password string, a Args) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", ep.String())
	if err != nil {
		return err
	}
	c := rpc.NewClient(conn)
	defer c.Close()
	a.Password = password
	return do(ctx, c, a)
}

// do performs one call on c, bounded by ctx.
func do(ctx context.Context, c *rpc.Client, a Args) error {
	var n int
	cl := c.Go("DB.Do", a, &n, make(chan *rpc.Call, 1))
	select {
	case <-cl.Done:
		if cl.Error != nil && cl.Error.Error() == errNotFound.Error() {
			return driver.ErrNotFound
		}
		return cl.Error
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Open is the built-in generator's driver for the fake database (a ycsb.Opener).
func Open(ctx context.Context, ep driver.Endpoint, cred driver.Credentials, _ int) (driver.DB, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := d.DialContext(dctx, "tcp", ep.String())
	if err != nil {
		return nil, err
	}
	db := &client{c: rpc.NewClient(conn), password: cred.Password}
	if err := db.op(ctx, Args{Op: "ping"}); err != nil {
		_ = db.c.Close()
		return nil, err
	}
	return db, nil
}

// client is one connection shared by the generator's workers (net/rpc multiplexes calls).
type client struct {
	c        *rpc.Client
	password string
}

var _ driver.DB = (*client)(nil)

func (d *client) op(ctx context.Context, a Args) error {
	a.Password = d.password
	return do(ctx, d.c, a)
}

func (d *client) Setup(ctx context.Context, _ driver.Table) error {
	return d.op(ctx, Args{Op: "setup"})
}
func (d *client) Read(ctx context.Context, key string, _ []string) error {
	return d.op(ctx, Args{Op: "read", Keys: []string{key}})
}
func (d *client) Scan(ctx context.Context, key string, n int, _ []string) error {
	return d.op(ctx, Args{Op: "scan", Keys: []string{key}, Count: n})
}
func (d *client) Update(ctx context.Context, key string, fields []string, values [][]byte) error {
	return d.op(ctx, Args{Op: "update", Keys: []string{key}, Fields: fields, Values: [][][]byte{values}})
}
func (d *client) Insert(ctx context.Context, key string, fields []string, values [][]byte) error {
	return d.op(ctx, Args{Op: "insert", Keys: []string{key}, Fields: fields, Values: [][][]byte{values}})
}
func (d *client) BatchInsert(ctx context.Context, keys []string, fields []string, values [][][]byte) error {
	return d.op(ctx, Args{Op: "insert", Keys: keys, Fields: fields, Values: values})
}
func (d *client) Close() error { return d.c.Close() }
