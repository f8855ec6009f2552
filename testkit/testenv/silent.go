package testenv

import (
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Silent is a server that accepts connections and never answers: a fake, at the process
// boundary, of an engine or API server that hangs. network is "unix" (a socket in a new short
// directory: a socket path has at most 107 bytes) or "tcp" (127.0.0.1, a free port). It returns
// the address (the socket's path, or host:port) and a channel that receives one value per
// accepted connection (dropped when nobody reads it). Connections are held open, never read or
// written, until the test ends.
func Silent(t testing.TB, network string) (addr string, accepted <-chan struct{}) {
	t.Helper()
	addr = "127.0.0.1:0"
	if network == "unix" {
		dir, err := os.MkdirTemp("", "silent-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		addr = filepath.Join(dir, "engine.sock")
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 1000)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String(), ch
}
