package postgres

import (
	"context"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms/postgresql"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/testkit/testdb"
)

// flakyProxy forwards connections on loopback to the server at target, except the first drop
// ones, which it closes after reading the client's first message (the client then meets EOF
// before the server answered, as it did once in CI). It returns its endpoint and the count of
// connections it accepted.
func flakyProxy(t *testing.T, target string, drop int32) (driver.Endpoint, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if accepted.Add(1) <= drop {
				_, _ = c.Read(make([]byte, 512))
				_ = c.Close()
				continue
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
			go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
		}
	}()
	addr := ln.Addr().(*net.TCPAddr)
	return driver.Endpoint{Host: addr.IP.String(), Port: addr.Port}, &accepted
}

// TestDialRetriesALostConnection: a connection lost before the server answered is tried again;
// the server's own refusal (a role it does not know) is not.
func TestDialRetriesALostConnection(t *testing.T) {
	box, d := testdb.Start(t, postgresql.PostgreSQL{})
	ep := box.Endpoint()
	target := net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	proxy, _ := flakyProxy(t, target, 1)
	db, err := New(ctx, proxy, d.Client(), 1)
	if err != nil {
		t.Fatalf("a connection lost once before the server answered was not tried again: %v", err)
	}
	_ = db.Close()

	proxy, accepted := flakyProxy(t, target, 0)
	cred := d.Client()
	cred.User = "boxbench_no_such_role"
	if db, err := New(ctx, proxy, cred, 1); err == nil {
		_ = db.Close()
		t.Fatal("a role the server does not know connected")
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("connections accepted for an unknown role = %d, want 1 (the server's answer is not retried)", n)
	}
}
