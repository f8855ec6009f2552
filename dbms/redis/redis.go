// Package redis describes Debian's Redis 7 to every platform (package dbms): its packages,
// configuration, start and readiness (redis.go), its INFO counters (observer.go) and a primary
// with replicas as a topology (cluster.go).
package redis

import (
	"context"
	"strconv"
	"syscall"

	goredis "github.com/redis/go-redis/v9"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// go-redis logs its failed dials to stderr; a readiness probe that retries while a server boots
// returns its errors instead, so the library's own log is silenced.
func init() { goredis.SetLogger(quietLogger{}) }

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}

// Redis is Debian's redis-server 7.
type Redis struct{}

func (Redis) Name() string { return "redis" }

// Traits: its own counters (observer.go) and the rules on them (rules.go), a primary with replicas, a unix socket (StartCommand).
func (r Redis) Traits() dbms.Traits {
	return dbms.Traits{Observer: r, WindowRules: windowRules, Clustered: r, Socket: "redis.sock"}
}

func (Redis) Packages() []string         { return []string{"redis-server", "redis-tools"} }
func (Redis) ServerPackage() string      { return "redis-server" }
func (Redis) User() string               { return "redis" }
func (Redis) DefaultPort() int           { return 6379 }
func (Redis) StopSignal() syscall.Signal { return syscall.SIGTERM } // fsyncs the AOF, then exits
func (Redis) VersionCommand() []string   { return []string{"/usr/bin/redis-server", "--version"} }
func (Redis) Client() driver.Credentials { return driver.Credentials{} }

// InitCommands: Redis needs no initialisation; the empty directory is its data directory.
func (Redis) InitCommands(dbms.Layout) []dbms.Step { return nil }

// ConfigFiles makes the data durable the way a database is expected to be: an append-only file
// fsynced every second, and no RDB snapshots that would fork during a measurement.
// With a password, clients must AUTH and protected mode is on.
func (Redis) ConfigFiles(s dbms.Settings) map[string][]byte {
	auth := "protected-mode no\n" // a bare Redis (tests only): any client
	if s.Password != "" {
		auth = "protected-mode yes\nrequirepass " + s.Password + "\n"
	}
	conf := "# written by boxbench; identical on every platform\n" +
		"daemonize no\n" + auth + "appendonly yes\nappendfsync everysec\n" +
		"save \"\"\nlogfile \"\"\ndatabases 1\ntcp-backlog 511\nmaxclients 10000\n"
	return map[string][]byte{"redis.conf": []byte(conf)}
}

func (Redis) StartCommand(l dbms.Layout) []string {
	return []string{"/usr/bin/redis-server", l.DataDir + "/redis.conf", "--dir", l.DataDir,
		"--port", strconv.Itoa(l.Port), "--bind", l.Listen,
		"--unixsocket", l.RunDir + "/redis.sock", "--unixsocketperm", "777"}
}

func (Redis) Ready(ctx context.Context, ep driver.Endpoint, cred driver.Credentials) error {
	o := &goredis.Options{Addr: ep.String(), MaxRetries: -1, Password: cred.Password}
	if ep.Unix != "" {
		o.Network, o.Addr = "unix", ep.Unix
	}
	c := goredis.NewClient(o)
	defer c.Close()
	// PING answers while the AOF is still loading; a loading server answers "LOADING" to reads.
	if err := c.Ping(ctx).Err(); err != nil {
		return err
	}
	if err := c.Get(ctx, "boxbench:ready").Err(); err != nil && err != goredis.Nil {
		return err
	}
	return nil
}
