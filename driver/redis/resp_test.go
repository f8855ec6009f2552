package redis

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/driver"
)

// scripted is a TCP server that answers each request it reads with the next canned reply
// (a fake at the process boundary: the parser is tested on replies a server would send,
// including ones a healthy Redis rarely does).
func scripted(t *testing.T, replies ...string) driver.Endpoint {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 64<<10)
		var req []byte
		for _, r := range replies {
			for req = req[:0]; len(req) == 0 || !wholeCommands(req); {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				req = append(req, buf[:n]...)
			}
			if _, err := io.WriteString(c, r); err != nil {
				return
			}
		}
		_, _ = c.Read(buf) // until the client closes
	}()
	a := ln.Addr().(*net.TCPAddr)
	return driver.Endpoint{Host: "127.0.0.1", Port: a.Port}
}

func TestReplies(t *testing.T) {
	big := strings.Repeat("x", 3*rbufSize+17) // a bulk longer than the read buffer
	keys := "*3\r\n$5\r\nuser1\r\n$" + strconv.Itoa(len(big)) + "\r\n" + big + "\r\n$5\r\nuser3\r\n"
	ep := scripted(t,
		"+PONG\r\n", // New's PING
		"*4\r\n$6\r\nFIELD0\r\n$1\r\na\r\n$6\r\nFIELD1\r\n$0\r\n\r\n", // HGETALL: found
		"*0\r\n",                   // HGETALL: missing
		"*2\r\n$-1\r\n$1\r\nb\r\n", // HMGET: first field nil = missing record
		"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
		"*1\r\n$1\r\nv\r\n",    // the connection is still in step after an error reply
		":1\r\n-ERR index\r\n", // insert: HSET fine, ZADD failed
		keys,                   // scan: ZRANGE, the keys collected across reads
		"*0\r\n*0\r\n*2\r\n$1\r\nk\r\n$1\r\nv\r\n", // scan: the three HGETALLs
		"?bogus\r\n", // a protocol error breaks the connection
	)
	ctx := context.Background()
	db, err := New(ctx, ep, driver.Credentials{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fields := []string{"FIELD0", "FIELD1"}
	var srvErr *errServer
	steps := []struct {
		name  string
		err   error
		check func(error) bool
	}{
		{"read found", db.Read(ctx, "user1", nil), nil},
		{"read missing", db.Read(ctx, "user2", nil), func(e error) bool { return errors.Is(e, driver.ErrNotFound) }},
		{"hmget missing", db.Read(ctx, "user2", fields), func(e error) bool { return errors.Is(e, driver.ErrNotFound) }},
		{"error reply", db.Read(ctx, "user1", nil), func(e error) bool { return errors.As(e, &srvErr) && strings.HasPrefix(srvErr.msg, "WRONGTYPE") }},
		{"after error reply", db.Read(ctx, "user1", fields[:1]), nil},
		{"insert, second reply an error", db.Insert(ctx, "user1", fields, [][]byte{{'a'}, {'b'}}), func(e error) bool { return errors.As(e, &srvErr) }},
		{"scan", db.Scan(ctx, "user1", 3, nil), nil},
		{"protocol error", db.Read(ctx, "user1", nil), func(e error) bool { return errors.Is(e, errProtocol) }},
	}
	for _, s := range steps {
		ok := s.err == nil
		if s.check != nil {
			ok = s.check(s.err)
		}
		if !ok {
			t.Errorf("%s: %v", s.name, s.err)
		}
	}
}

// wholeCommands tells whether b is a sequence of complete RESP commands (arrays of bulk
// strings), i.e. whether a client's round trip has arrived whole.
func wholeCommands(b []byte) bool {
	line := func() (int, bool) {
		i := bytes.Index(b, []byte("\r\n"))
		if i < 1 {
			return 0, false
		}
		n, err := strconv.Atoi(string(b[1:i]))
		b = b[i+2:]
		return n, err == nil
	}
	for len(b) > 0 {
		if b[0] != '*' {
			return false
		}
		n, ok := line()
		for ; ok && n > 0; n-- {
			var l int
			if l, ok = line(); ok && len(b) >= l+2 {
				b = b[l+2:]
			} else {
				ok = false
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
