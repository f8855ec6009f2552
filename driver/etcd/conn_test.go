package etcd

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/boxbench/boxbench/driver/internal/netconn"
)

// A scripted HTTP/2 server on a loopback socket (the process boundary the client talks
// across), written with x/net/http2's Framer, checks the client's framing: flow control both
// ways, SETTINGS and PING acknowledgements, header blocks split over CONTINUATION, padded and
// split DATA, trailers-only errors, RST_STREAM and GOAWAY. Against real etcd: etcd_test.go.

type fakeServer struct {
	t   *testing.T
	fr  *http2.Framer
	enc *hpack.Encoder
	hb  bytes.Buffer
	// what the client sent before the last request ended
	settingsAcks, pingAcks   int
	headers                  []hpack.HeaderField
	connCredit, streamCredit int // what the client may still send
}

// request reads frames until a request stream ends, answering flow control as it goes, and
// returns its stream id and its DATA.
func (s *fakeServer) request() (uint32, []byte) {
	var body []byte
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) { s.headers = append(s.headers, f) })
	for {
		f, err := s.fr.ReadFrame()
		if err != nil {
			s.t.Errorf("server read: %v", err)
			return 0, nil
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				s.settingsAcks++
			}
		case *http2.PingFrame:
			if f.IsAck() && f.Data == [8]byte{1, 2, 3, 4, 5, 6, 7, 8} {
				s.pingAcks++
			}
		case *http2.HeadersFrame:
			s.streamCredit = 65535
			s.headers = s.headers[:0]
			if _, err := dec.Write(f.HeaderBlockFragment()); err != nil {
				s.t.Errorf("request headers: %v", err)
			}
		case *http2.DataFrame:
			body = append(body, f.Data()...)
			// Flow control, enforced: the windows are given back only once used up, the
			// connection's 100000 bytes at a time and the stream's 65535, so that either may
			// be the one that stops the client, and a client that sends past one is caught.
			s.connCredit -= len(f.Data())
			s.streamCredit -= len(f.Data())
			if s.connCredit < 0 || s.streamCredit < 0 {
				s.t.Errorf("the client sent past a window: credit %d on the connection, %d on the stream", s.connCredit, s.streamCredit)
			}
			if s.connCredit == 0 && !f.StreamEnded() {
				_ = s.fr.WriteWindowUpdate(0, 100000)
				s.connCredit = 100000
			}
			if s.streamCredit == 0 && !f.StreamEnded() {
				_ = s.fr.WriteWindowUpdate(f.StreamID, 65535)
				s.streamCredit = 65535
			}
			if f.StreamEnded() {
				return f.StreamID, body
			}
		}
	}
}

func (s *fakeServer) block(fields ...string) []byte {
	s.hb.Reset()
	for i := 0; i < len(fields); i += 2 {
		_ = s.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return append([]byte(nil), s.hb.Bytes()...)
}

// reply sends a successful reply carrying msg, its header block split in two and its DATA in
// two frames, the first padded, with a PING between them.
func (s *fakeServer) reply(id uint32, msg []byte) {
	h := s.block(":status", "200", "content-type", "application/grpc")
	_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h[:2]})
	_ = s.fr.WriteContinuation(id, true, h[2:])
	body := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
	body = append(body, msg...)
	_ = s.fr.WriteDataPadded(id, false, body[:3], []byte{0, 0, 0})
	_ = s.fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
	_ = s.fr.WriteData(id, false, body[3:])
	_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, EndHeaders: true, EndStream: true,
		BlockFragment: s.block("grpc-status", "0", "grpc-message", "")})
}

// scriptedServer listens on loopback for one connection, checks the client's HTTP/2 preface and
// hands the connection to script, which plays the server's side. It returns the address to dial
// and a channel closed when script has returned (and the connection is closed).
func scriptedServer(t *testing.T, script func(nc net.Conn)) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		pre := make([]byte, len(clientPreface))
		if _, err := io.ReadFull(nc, pre); err != nil || string(pre) != clientPreface {
			t.Errorf("preface %q, %v", pre, err)
			return
		}
		script(nc)
	}()
	return ln.Addr().String(), done
}

func TestConnFraming(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 20000) // 200 kB: over every window
	addr, serverDone := scriptedServer(t, func(nc net.Conn) {
		s := &fakeServer{t: t, fr: http2.NewFramer(nc, nc), connCredit: 65535}
		s.enc = hpack.NewEncoder(&s.hb)
		_ = s.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 16384})

		id, body := s.request() // 1: a large request, a split reply
		if !bytes.Equal(body[5:], big) || binary.BigEndian.Uint32(body[1:5]) != uint32(len(big)) || body[0] != 0 {
			t.Errorf("request 1: %d bytes, not the gRPC message of %d bytes", len(body), len(big))
		}
		want := map[string]string{":method": "POST", ":scheme": "http", ":path": "/etcdserverpb.KV/Put",
			":authority": "example:2379", "content-type": "application/grpc", "te": "trailers"}
		for _, f := range s.headers {
			if want[f.Name] == f.Value {
				delete(want, f.Name)
			}
		}
		if len(want) > 0 {
			t.Errorf("request headers %v miss %v", s.headers, want)
		}
		s.reply(id, []byte("reply-one"))

		id, _ = s.request() // 2: acknowledgements arrived; a trailers-only error
		if s.settingsAcks != 1 || s.pingAcks != 1 {
			t.Errorf("before request 2: %d SETTINGS acks, %d PING acks, want 1 and 1", s.settingsAcks, s.pingAcks)
		}
		_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, EndHeaders: true, EndStream: true,
			BlockFragment: s.block(":status", "200", "content-type", "application/grpc", "grpc-status", "5", "grpc-message", "key%20not%20found")})

		id, _ = s.request() // 3: a reply after headers from the dynamic table
		s.reply(id, []byte("reply-three"))

		id, _ = s.request() // 4: reset
		_ = s.fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)

		_, _ = s.request() // 5: GOAWAY before the stream: not processed
		_ = s.fr.WriteGoAway(id, http2.ErrCodeNo, nil)
		_, _ = io.Copy(io.Discard, nc)
	})

	var conns netconn.Conns
	defer conns.CloseAll()
	nc, err := conns.Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newConn(nc, "example:2379")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.call(mPut, append(c.request(), big...)); err != nil || string(c.msg) != "reply-one" {
		t.Fatalf("call 1: %v, reply %q", err, c.msg)
	}
	err = c.call(mRange, append(c.request(), "x"...))
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 5 || se.Message != "key not found" || c.broken {
		t.Errorf("call 2: %v (broken %v), want status 5 \"key not found\"", err, c.broken)
	}
	if err := c.call(mRange, append(c.request(), "y"...)); err != nil || string(c.msg) != "reply-three" {
		t.Errorf("call 3: %v, reply %q", err, c.msg)
	}
	if err := c.call(mRange, c.request()); err == nil || !strings.Contains(err.Error(), "REFUSED_STREAM") {
		t.Errorf("call 4: %v, want a reset stream", err)
	}
	if err := c.call(mRange, c.request()); !errors.Is(err, errGoAway) || !c.broken {
		t.Errorf("call 5: %v (broken %v), want errGoAway and a broken connection", err, c.broken)
	}
	c.close()
	select {
	case <-serverDone:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not finish")
	}
}

// TestConnWindowWaitReadsWhatArrived: a request larger than the server's window waits for a
// WINDOW_UPDATE. Here the server sends it at once, behind more frames than the client's read
// buffer holds and PINGs that the client must acknowledge: the client reads part of it, queues
// the acknowledgements, and must still read the rest, which is already in its socket. If it
// sends the acknowledgements with netconn's reply shortcut (send, then wait for the socket to
// become readable without trying a read), the readiness of what already arrived is lost and the
// call waits for ever — the stall of a swarm load in the previous session ("insert records
// 300..399" waiting > 6 min with bytes unread in boxbench's receive queue).
func TestConnWindowWaitReadsWhatArrived(t *testing.T) {
	big := bytes.Repeat([]byte("w"), 200000)
	addr, serverDone := scriptedServer(t, func(nc net.Conn) {
		fr := http2.NewFramer(nc, nc)
		var got int
		var id uint32
		for got < 65535 { // the client's first window's worth
			f, err := fr.ReadFrame()
			if err != nil {
				t.Errorf("server read: %v", err)
				return
			}
			if d, ok := f.(*http2.DataFrame); ok {
				got += len(d.Data())
				id = d.StreamID
			}
		}
		// One write: ~100 kB of frames the client ignores, with a PING after each, then the
		// window updates it waits for.
		var burst bytes.Buffer
		bf := http2.NewFramer(&burst, nil)
		for i := range 6 {
			_ = bf.WriteRawFrame(0xfe, 0, 0, bytes.Repeat([]byte{'p'}, 16000))
			_ = bf.WritePing(false, [8]byte{byte(i)})
		}
		_ = bf.WriteWindowUpdate(0, 1<<20)
		_ = bf.WriteWindowUpdate(id, 1<<20)
		if _, err := nc.Write(burst.Bytes()); err != nil {
			t.Errorf("server write: %v", err)
			return
		}
		for { // the rest of the request
			f, err := fr.ReadFrame()
			if err != nil {
				t.Errorf("server read: %v", err)
				return
			}
			if d, ok := f.(*http2.DataFrame); ok && d.StreamEnded() {
				break
			}
		}
		var hb bytes.Buffer
		enc := hpack.NewEncoder(&hb)
		_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		_ = enc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: "0"})
		body := binary.BigEndian.AppendUint32([]byte{0}, 2)
		_ = fr.WriteData(id, false, append(body, "ok"...))
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, EndHeaders: true, EndStream: true, BlockFragment: hb.Bytes()})
		_, _ = io.Copy(io.Discard, nc)
	})

	var conns netconn.Conns
	defer conns.CloseAll()
	nc, err := conns.Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// Not a timing assertion: a bound on a wait that, when the defect is there, never ends.
	_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	c, err := newConn(nc, "example:2379")
	if err != nil {
		t.Fatal(err)
	}
	err = c.call(mPut, append(c.request(), big...))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("call: %v: the client waited for a WINDOW_UPDATE that was already in its socket "+
			"(frames that arrived before its wait were never read)", err)
	}
	if err != nil || string(c.msg) != "ok" {
		t.Fatalf("call: %v, reply %q", err, c.msg)
	}
	c.close()
	<-serverDone
}
