package liblog

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/grpclog"
)

// TestRoute: after Route, the process-wide loggers of go-sql-driver and gRPC write to the
// routed log at debug level, naming their library, and nothing to fd 2; a log that does not
// take debug lines gets nothing, and nil drops them. (driver/mysql's TestTeardownPrintsNothing
// checks a real MariaDB teardown.)
func TestRoute(t *testing.T) {
	var buf bytes.Buffer
	Route(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { Route(nil) })

	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(f.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	gomysql.NewConfig().Logger.Print("packets.go:58 ", "unexpected EOF")
	grpclog.Errorf("addrConn.createTransport failed to connect to %s", "127.0.0.1:1")
	Printer("redis").Printf(context.Background(), "redis: pool: %d connections", 3)
	_ = unix.Dup2(saved, 2)
	_ = unix.Close(saved)
	printed, _ := os.ReadFile(f.Name())

	if len(printed) > 0 {
		t.Errorf("libraries printed to stderr: %q", printed)
	}
	got := buf.String()
	for _, w := range []string{
		`level=DEBUG msg="packets.go:58 unexpected EOF" lib=mysql`,
		`level=DEBUG msg="addrConn.createTransport failed to connect to 127.0.0.1:1" lib=grpc`,
		`level=DEBUG msg="redis: pool: 3 connections" lib=redis`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("log lacks %s:\n%s", w, got)
		}
	}

	buf.Reset()
	Route(slog.New(slog.NewTextHandler(&buf, nil))) // info level: debug lines are not written
	Printer("mysql").Print("dropped")
	Route(nil)
	Printer("mysql").Print("dropped")
	if buf.Len() > 0 {
		t.Errorf("lines a log does not take were written: %q", buf.String())
	}
}
