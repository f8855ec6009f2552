package mongodb

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/boxbench/boxbench/driver/internal/netconn"
)

// TestExchange runs the message layer over a real loopback socket against a scripted peer (a
// fake at the network boundary: the replies a server could send, including the ones a real
// server sends only when something is wrong). For each case the peer reads one request and
// answers with reply(reqID), written in pieces of chunk bytes.
func TestExchange(t *testing.T) {
	big := bytes.Repeat([]byte{'x'}, 100<<10) // bigger than the initial read buffer
	bigDoc := okDoc(bsoncore.AppendBinaryElement(nil, "payload", 0, big))
	cases := []struct {
		name   string
		reply  func(reqID int32) []byte
		chunk  int
		closeW bool  // the peer closes after writing
		err    error // nil: the reply must come back whole
	}{
		{"one write", func(id int32) []byte { return message(t, id, 0, okDoc()) }, 0, false, nil},
		{"in pieces of 3 bytes", func(id int32) []byte { return message(t, id, 0, okDoc()) }, 3, false, nil},
		{"100 KiB", func(id int32) []byte { return message(t, id, 0, bigDoc) }, 4096, false, nil},
		{"reply to another request", func(id int32) []byte { return message(t, id+1, 0, okDoc()) }, 0, false, errProtocol},
		{"bytes after the reply", func(id int32) []byte { return append(message(t, id, 0, okDoc()), 0) }, 0, false, errProtocol},
		{"absurd length", func(int32) []byte { return []byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0} }, 0, false, errProtocol},
		{"closed mid-reply", func(id int32) []byte { m := message(t, id, 0, okDoc()); return m[:len(m)-3] }, 0, true, io.ErrUnexpectedEOF},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			peerDone := make(chan error, 1)
			go func() { peerDone <- peer(ln, tc.reply, tc.chunk, tc.closeW) }()
			var conns netconn.Conns
			defer conns.CloseAll()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			nc, err := conns.Dial(ctx, "tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			c := newConn(nc)
			_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
			c.simple("ping", "", "db")
			want := tc.reply(c.reqID)
			body, err := c.exchange()
			if tc.err == nil {
				if err != nil || c.broken {
					t.Fatalf("%v (broken %v)", err, c.broken)
				}
				if !bytes.Equal(body, want[headerLen+5:]) {
					t.Errorf("body of %d bytes differs from the %d sent", len(body), len(want)-headerLen-5)
				}
			} else if !errors.Is(err, tc.err) || !c.broken {
				t.Errorf("%v (broken %v), want %v and a broken connection", err, c.broken, tc.err)
			}
			conns.CloseAll() // the peer waits for it
			if err := <-peerDone; err != nil {
				t.Errorf("peer: %v", err)
			}
		})
	}
}

// peer accepts one connection, reads one request and writes reply(its request id) in chunks.
func peer(ln net.Listener, reply func(int32) []byte, chunk int, closeAfter bool) error {
	nc, err := ln.Accept()
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	var hdr [headerLen]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		return err
	}
	rest := make([]byte, binary.LittleEndian.Uint32(hdr[:])-headerLen)
	if _, err := io.ReadFull(nc, rest); err != nil {
		return err
	}
	m := reply(int32(binary.LittleEndian.Uint32(hdr[4:])))
	if chunk == 0 {
		chunk = len(m)
	}
	for len(m) > 0 {
		n := min(chunk, len(m))
		if _, err := nc.Write(m[:n]); err != nil {
			return err
		}
		m = m[n:]
	}
	if closeAfter {
		return nil
	}
	// Wait for the client to close, so that it reads what was written before the peer goes.
	_, _ = nc.Read(hdr[:1])
	return nil
}
