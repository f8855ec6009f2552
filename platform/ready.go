package platform

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// ReadyTimeout bounds how long a server may take to answer its readiness probe;
// ReadyTimeoutEmulated on a box whose CPU is emulated (FactEmulated), where a JVM's start
// alone (Cassandra's) took longer than ReadyTimeout under QEMU's TCG. The provision's own
// timeout (timeouts.provision) still bounds both.
const (
	ReadyTimeout         = 180 * time.Second
	ReadyTimeoutEmulated = 30 * time.Minute
	// ReadyProbeEmulated is one probe's time on such a box.
	ReadyProbeEmulated = 60 * time.Second
)

// WaitReady probes d at ep until it answers, the server exits (exited is closed; exitErr says
// how), ctx ends, or ReadyTimeout (or the longer time the database asks for:
// dbms.ReadyTimeout) passes. Each probe has two seconds.
func WaitReady(ctx context.Context, d dbms.DBMS, ep driver.Endpoint, exited <-chan struct{}, exitErr func() error) error {
	return WaitReadyFor(ctx, d, ep, exited, exitErr, dbms.ReadyTimeout(d, ReadyTimeout), 2*time.Second)
}

// WaitReadyFor is WaitReady with limit instead of ReadyTimeout and probe for each probe's
// time (an emulated CPU needs seconds for one authenticated connection: Cassandra's bcrypt).
func WaitReadyFor(ctx context.Context, d dbms.DBMS, ep driver.Endpoint, exited <-chan struct{}, exitErr func() error, limit, probe time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("%s exited before it was ready: %w", d.Name(), exitErr())
		case <-ctx.Done():
			if last != nil {
				// Say what the probes met (a server that accepts and never answers, one still
				// loading its data), not only that the provision's time ran out.
				return fmt.Errorf("%s not ready at %s when the provision's time ran out (last probe: %v): %w", d.Name(), ep, last, ctx.Err())
			}
			return ctx.Err()
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, probe)
		last = d.Ready(pctx, ep, d.Client())
		cancel()
		if last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready at %s after %s: %v", d.Name(), ep, limit, last)
}

// FreePort returns a TCP port on the loopback address that nothing listens on now, for a
// server the platform is about to start.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
