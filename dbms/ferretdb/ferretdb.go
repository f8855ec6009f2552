// Package ferretdb describes FerretDB over PostgreSQL (package postgresql), both in one box,
// to every platform (package dbms).
package ferretdb

import (
	"context"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/postgresql"
	"github.com/boxbench/boxbench/driver"
)

// FerretDB is FerretDB 1.x — a MongoDB wire-protocol server that stores documents in
// PostgreSQL (JSONB in tables of its own) — over Debian's PostgreSQL 15, both in the same box.
// It answers the "document store in a box" question and exercises the MongoDB driver path; it
// is not MongoDB, and its storage engine is PostgreSQL's, not WiredTiger (docs/databases.md).
//
// FerretDB is not packaged by Debian: `make setup` builds it from the Go module proxy at
// FerretDBVersion (scripts/ferretdb.sh) into FerretDBBinary, a static binary that runs natively
// from that path and is copied to the same path into every image (BuiltFiles; the tree's recipe
// holds its sha256, so native and boxes run the same build).
//
// The box runs two servers. The start command is boxbench's script (ferretdbScript), which
// stays the box's main process: it starts PostgreSQL (listening only on a unix socket in the
// run directory, the run's password set first as for `dbms: postgresql`), waits until it
// accepts connections, starts FerretDB on the box's address, and on SIGTERM stops FerretDB,
// then PostgreSQL with a fast shutdown (a checkpoint), and exits; if either server dies, it
// stops the other and exits non-zero. Platforms watch and signal one process, as for the
// others, and the box's cgroup holds both servers (their CPU and memory are the box's).
type FerretDB struct{}

const (
	// FerretDBVersion is the FerretDB release scripts/ferretdb.sh builds (its default).
	FerretDBVersion = "v1.24.0"
	// FerretDBBinary is where scripts/ferretdb.sh caches it, natively and in images.
	FerretDBBinary = "/var/cache/boxbench/ferretdb/" + FerretDBVersion + "/ferretdb"
	ferretdbScript = "boxbench-ferretdb.sh"
	// FerretDBSocket is FerretDB's own unix socket, in the run directory.
	FerretDBSocket = "ferretdb.sock"
	// ferretdbPGPort names PostgreSQL's socket in the run directory (.s.PGSQL.5432); it
	// listens on no TCP port.
	ferretdbPGPort = 5432
)

func (FerretDB) Name() string { return "ferretdb" }
func (FerretDB) Packages() []string {
	return []string{"postgresql-15", "postgresql-client-15"}
}
func (FerretDB) ServerPackage() string      { return "postgresql-15" }
func (FerretDB) User() string               { return "postgres" }
func (FerretDB) DefaultPort() int           { return 27017 }
func (FerretDB) StopSignal() syscall.Signal { return syscall.SIGTERM } // the script stops both

// VersionCommand prints both servers' versions on one line: "FerretDB v1.24.0 over postgres
// (PostgreSQL) 15.x".
func (FerretDB) VersionCommand() []string {
	return []string{"/bin/sh", "-c", `echo "FerretDB $(` + FerretDBBinary +
		` --version | sed -n 's/^version: //p') over $(` + postgresql.Bin + `postgres --version)"`}
}

// CodeFullCollectionReads is the code of the validity warning that every operation read the
// whole collection (Traits.ScansPerKey; docs/results.md lists it among the warnings).
const CodeFullCollectionReads = "ferretdb_full_collection_reads"

// Traits: the server is FerretDB's binary, built by `make setup` (the box needs it at the same
// path as on the host), in front of PostgreSQL's Debian packages.
//
// ScansPerKey: FerretDB 1.24 on PostgreSQL reads the whole collection for every operation on
// a key. It pushes _id equality down as a JSONB containment (_jsonb->'_id' @> value), which
// PostgreSQL's btree index on _jsonb->'_id' cannot serve, so each read and update is a
// sequential scan; a scan's _id ≥ key and sort are not pushed down at all. A memory-bound /
// disk-bound label means something else than for the other databases (docs/databases.md).
func (FerretDB) Traits() dbms.Traits {
	return dbms.Traits{ServerBinary: FerretDBBinary, BuiltFiles: []string{FerretDBBinary}, Socket: FerretDBSocket,
		ScansPerKey: &dbms.ScansPerKey{Code: CodeFullCollectionReads,
			Why: "FerretDB 1.24, which reads the whole collection for each: its _id lookups reach PostgreSQL as " +
				"a JSONB containment its _id index cannot serve (a sequential scan), and a scan's range and sort are " +
				"done in FerretDB"}}
}

// Client: PostgreSQL's role; FerretDB passes a client's PLAIN credentials to PostgreSQL. The
// documents go to the "ycsb" database (a PostgreSQL schema of FerretDB's).
func (FerretDB) Client() driver.Credentials {
	return driver.Credentials{User: "boxbench", Database: "ycsb"}
}

// InitCommands initialise PostgreSQL's cluster (FerretDB creates its schemas itself).
func (FerretDB) InitCommands(l dbms.Layout) []dbms.Step {
	return postgresql.PostgreSQL{}.InitCommands(l)
}

// ConfigFiles are PostgreSQL's (sized on seven eighths of the memory limit) and the start
// script; FerretDB, a Go process without caches of its own, gets the last eighth as its
// GOMEMLIMIT.
func (FerretDB) ConfigFiles(s dbms.Settings) map[string][]byte {
	pg := s
	env := ""
	if s.MemoryBytes > 0 {
		pg.MemoryBytes = s.MemoryBytes * 7 / 8
		env = "export GOMEMLIMIT=" + strconv.FormatInt(s.MemoryBytes/8, 10) + "\n"
	}
	files := postgresql.PostgreSQL{}.ConfigFiles(pg)
	files[ferretdbScript] = []byte(`# written by boxbench: PostgreSQL, then FerretDB over it, in one box
# usage: sh boxbench-ferretdb.sh RUNDIR LISTEN-ADDR POSTGRESQL-START-COMMAND...
set -u
run=$1; addr=$2; shift 2
umask 077
"$@" &
pg=$!
fd=
stop() {
  trap '' TERM INT
  if [ -n "$fd" ]; then kill -TERM "$fd" 2>/dev/null; wait "$fd"; fi
  kill -INT "$pg" 2>/dev/null; wait "$pg"
  exit "$1"
}
trap 'stop 0' TERM INT
i=0
until /usr/lib/postgresql/15/bin/pg_isready -q -h "$run" -p ` + strconv.Itoa(ferretdbPGPort) + `; do
  kill -0 "$pg" 2>/dev/null || { echo "boxbench: PostgreSQL exited before it was ready" >&2; exit 1; }
  i=$((i+1)); [ $i -gt 1500 ] && { echo "boxbench: PostgreSQL not ready after 300 s" >&2; stop 1; }
  sleep 0.2
done
` + env + `rm -f "$run/` + FerretDBSocket + `"
` + FerretDBBinary + ` --handler=postgresql \
  --postgresql-url="postgres://boxbench@/postgres?host=$run&port=` + strconv.Itoa(ferretdbPGPort) + `" \
  --listen-addr="$addr" --listen-unix="$run/` + FerretDBSocket + `" --state-dir="$run" \
  --debug-addr=- --telemetry=disable --log-level=warn --log-format=text &
fd=$!
while kill -0 "$fd" 2>/dev/null && kill -0 "$pg" 2>/dev/null; do
  sleep 1 &
  wait $!
done
echo "boxbench: a server of the box exited" >&2
stop 1
`)
	return files
}

// StartCommand runs the script with PostgreSQL's own start command (with its password step).
func (FerretDB) StartCommand(l dbms.Layout) []string {
	pg := l
	pg.Listen, pg.Port = "", ferretdbPGPort // no TCP: FerretDB reaches it over its socket
	argv := []string{"/bin/sh", l.DataDir + "/" + ferretdbScript, l.RunDir,
		l.Listen + ":" + strconv.Itoa(l.Port)}
	return append(argv, postgresql.PostgreSQL{}.StartCommand(pg)...)
}

// MongoOptions are the MongoDB Go driver's options for ep and c: one direct connection (no
// topology discovery), PLAIN credentials when there is a password (FerretDB 1.x's mechanism
// without its experimental authentication; it hands them to PostgreSQL).
func MongoOptions(ep driver.Endpoint, c driver.Credentials) *options.ClientOptions {
	o := options.Client().SetDirect(true).SetRetryWrites(false).SetRetryReads(false).
		SetConnectTimeout(5 * time.Second).SetServerSelectionTimeout(5 * time.Second)
	if ep.Unix != "" {
		o.SetHosts([]string{ep.Unix})
	} else {
		o.SetHosts([]string{ep.String()})
	}
	if c.Password != "" {
		o.SetAuth(options.Credential{AuthMechanism: "PLAIN", AuthSource: "$external",
			Username: c.User, Password: c.Password})
	}
	return o
}

// Ready counts the documents of a collection: FerretDB answers, and reaches PostgreSQL with
// the client's credentials.
func (FerretDB) Ready(ctx context.Context, ep driver.Endpoint, c driver.Credentials) error {
	cli, err := mongo.Connect(MongoOptions(ep, c))
	if err != nil {
		return err
	}
	defer cli.Disconnect(context.Background())
	db := c.Database
	if db == "" {
		db = "ycsb"
	}
	if _, err := cli.Database(db).Collection("boxbench_ready").CountDocuments(ctx, bson.D{}); err != nil {
		return fmt.Errorf("ferretdb: %w", err)
	}
	return nil
}
