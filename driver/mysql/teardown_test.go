package mysql

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/dbms/mariadb"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/liblog"
	"github.com/boxbench/boxbench/testkit/testdb"
)

// TestTeardownPrintsNothing (issue 45): a real MariaDB torn down under an open pool makes
// go-sql-driver log what it sees ("packets.go:58 unexpected EOF"); that line reaches
// boxbench's log at debug level, named by its library, and nothing reaches the process's
// stderr (fd 2 itself is captured, where the driver's default logger writes).
func TestTeardownPrintsNothing(t *testing.T) {
	box, d := testdb.Start(t, mariadb.MariaDB{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var lines records
	liblog.Route(slog.New(&lines))
	t.Cleanup(func() { liblog.Route(nil) })

	stderr := captureStderr(t)
	db, err := New(ctx, box.Endpoint(), d.Client(), 4)
	if err != nil {
		t.Fatal(err)
	}
	tbl := driver.Table{Name: "usertable", FieldCount: 1}
	if err := db.Setup(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := db.Insert(ctx, "user1", tbl.Fields(), [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}
	if err := box.Teardown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The pool's connections now face a closed server: each operation fails, and the driver
	// logs what it read.
	for range 3 {
		if err := db.Read(ctx, "user1", nil); err == nil {
			t.Fatal("read after teardown succeeded")
		}
	}
	db.Close()
	printed := stderr()

	if strings.Contains(printed, "[mysql]") || strings.Contains(printed, "packets.go") {
		t.Errorf("the driver printed to stderr:\n%s", printed)
	}
	got := lines.String()
	if !strings.Contains(got, "lib=mysql") || !strings.Contains(got, "level=DEBUG") {
		t.Errorf("the driver's lines did not reach the log at debug level (the test then proves nothing):\n%s", got)
	}
	t.Logf("logged: %s", got)
}

// captureStderr points fd 2 at a file until the returned function, which restores it and
// returns what was written.
func captureStderr(t *testing.T) func() string {
	t.Helper()
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
	var once sync.Once
	var out string
	stop := func() string {
		once.Do(func() {
			_ = unix.Dup2(saved, 2)
			_ = unix.Close(saved)
			b, _ := os.ReadFile(f.Name())
			out = string(b)
			f.Close()
		})
		return out
	}
	t.Cleanup(func() { stop() })
	return stop
}

// records is a slog handler that keeps every record as a text line.
type records struct {
	mu sync.Mutex
	b  strings.Builder
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.b.WriteString("level=" + rec.Level.String() + " msg=" + rec.Message)
	rec.Attrs(func(a slog.Attr) bool { r.b.WriteString(" " + a.String()); return true })
	r.b.WriteString("\n")
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }
func (r *records) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.b.String()
}
