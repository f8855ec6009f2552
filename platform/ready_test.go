package platform

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/mariadb"
	"github.com/boxbench/boxbench/dbms/postgresql"
	"github.com/boxbench/boxbench/dbms/redis"
	"github.com/boxbench/boxbench/driver"
)

// TestHungProbe: a server that accepts connections and never answers (a stopped process
// holds its listening socket the same way) does not hang WaitReady past its context.
func TestHungProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ep := driver.Endpoint{Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port}
	for _, d := range []dbms.DBMS{redis.Redis{}, postgresql.PostgreSQL{}, mariadb.MariaDB{}} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		done := make(chan error, 1)
		go func() { done <- WaitReady(ctx, d, ep, nil, nil) }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: %v, want the deadline", d.Name(), err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: WaitReady hung on a server that never answers", d.Name())
		}
		cancel()
	}
}
