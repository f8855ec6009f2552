// Package liblog takes what the client libraries boxbench uses would print to the process's
// stderr by themselves and writes it to boxbench's own log instead, at debug level, with the
// library's name: go-sql-driver/mysql's "[mysql] packets.go:58 unexpected EOF" when a MariaDB
// box is torn down under an open pool, go-redis's pool notices, gRPC's errors (under the etcd
// clients). What such a line says — a connection the server closed — is already an error the
// caller handles and reports; printed on its own it only interleaves with boxbench's output.
//
// The other libraries write nothing by themselves: pgx, gocql (its default logger is at
// LogLevelNone), the Docker SDK and the BSON package log only through a logger one passes
// in; client-go's klog is routed by the kubernetes platform (klog.SetSlogLogger), and the
// etcd clients get zap.NewNop.
package liblog

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/grpclog"
)

// sink is where the libraries' lines go; nil drops them (before Route, and in the tests of
// packages that never call it).
var sink atomic.Pointer[slog.Logger]

var install sync.Once

// Route sends the libraries' lines to log at debug level from now on (nil: drops them) and,
// the first time, replaces the loggers the libraries keep for the whole process. The cli calls
// it once its log is set up, before any client connects: gRPC's logger may only be replaced
// before gRPC is used. Later calls only change the destination. Safe for concurrent use.
func Route(log *slog.Logger) {
	sink.Store(log)
	install.Do(func() {
		_ = gomysql.SetLogger(Printer("mysql")) // its only error is for a nil logger
		redis.SetLogger(Printer("redis"))
		grpclog.SetLoggerV2(grpcLogger{})
	})
}

// write writes one line of library lib to the routed log, when that log takes debug lines.
func write(level slog.Level, lib string, line func() string) {
	log := sink.Load()
	if log == nil || !log.Enabled(context.Background(), level) {
		return
	}
	log.Log(context.Background(), level, strings.TrimSpace(line()), "lib", lib)
}

// Printer is the logger of one library that logs through a Print(...any) method
// (go-sql-driver/mysql's Logger, also each connection's Config.Logger) or a Printf(ctx, format,
// ...) one (go-redis's Logging). Its value is the library's name, given as the line's lib.
type Printer string

// Print writes v, formatted as fmt.Sprint does, at debug level.
func (p Printer) Print(v ...any) {
	write(slog.LevelDebug, string(p), func() string { return fmt.Sprint(v...) })
}

// Printf writes the formatted line at debug level.
func (p Printer) Printf(_ context.Context, format string, v ...any) {
	write(slog.LevelDebug, string(p), func() string { return fmt.Sprintf(format, v...) })
}

// grpcLogger is gRPC's LoggerV2: every line at debug level; Fatal still ends the process, as
// gRPC's contract says, after writing its line at error level.
type grpcLogger struct{}

func (grpcLogger) line(v ...any) func() string { return func() string { return fmt.Sprint(v...) } }
func (grpcLogger) linef(f string, v ...any) func() string {
	return func() string { return fmt.Sprintf(f, v...) }
}

func (g grpcLogger) Info(v ...any)               { write(slog.LevelDebug, "grpc", g.line(v...)) }
func (g grpcLogger) Infoln(v ...any)             { write(slog.LevelDebug, "grpc", g.line(v...)) }
func (g grpcLogger) Infof(f string, v ...any)    { write(slog.LevelDebug, "grpc", g.linef(f, v...)) }
func (g grpcLogger) Warning(v ...any)            { write(slog.LevelDebug, "grpc", g.line(v...)) }
func (g grpcLogger) Warningln(v ...any)          { write(slog.LevelDebug, "grpc", g.line(v...)) }
func (g grpcLogger) Warningf(f string, v ...any) { write(slog.LevelDebug, "grpc", g.linef(f, v...)) }
func (g grpcLogger) Error(v ...any)              { write(slog.LevelDebug, "grpc", g.line(v...)) }
func (g grpcLogger) Errorln(v ...any)            { write(slog.LevelDebug, "grpc", g.line(v...)) }
func (g grpcLogger) Errorf(f string, v ...any)   { write(slog.LevelDebug, "grpc", g.linef(f, v...)) }
func (g grpcLogger) Fatal(v ...any)              { g.fatal(g.line(v...)) }
func (g grpcLogger) Fatalln(v ...any)            { g.fatal(g.line(v...)) }
func (g grpcLogger) Fatalf(f string, v ...any)   { g.fatal(g.linef(f, v...)) }
func (grpcLogger) V(int) bool                    { return false }
func (grpcLogger) fatal(line func() string)      { write(slog.LevelError, "grpc", line); os.Exit(1) }
