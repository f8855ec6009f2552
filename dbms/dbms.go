// Package dbms describes what a database needs on any platform: its Debian packages, the
// configuration boxbench owns, how to initialise a data directory, how to start and stop the
// server, and how to tell that it is ready. Platforms (native, docker, …) use the same
// description, so the same build runs with the same configuration everywhere.
//
// This package is the contract (DBMS, Traits, Layout, Clustered, Observer, the wrappers
// WithPassword and Idle, TemplateHash) and the helpers several databases share; each database
// is a package of its own below it (dbms/postgresql, dbms/redis, …), listed in one row of
// builtin/databases.
package dbms

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/boxbench/boxbench/driver"
)

// Layout is where a server's files live and where it listens, as seen by the server (a host
// path natively, a path inside the container otherwise).
type Layout struct {
	DataDir string // the data directory; boxbench's config files live in it too
	RunDir  string // sockets and pid files
	Listen  string // address to bind ("127.0.0.1", "0.0.0.0")
	Port    int
	// SetPassword: the start command first sets the client's password from the credential
	// file ConfigFiles wrote (WithPassword sets it).
	SetPassword bool
}

// Settings size the configuration. Buffers follow the box's memory limit, never host RAM.
type Settings struct {
	MemoryBytes int64 // the box's memory limit; 0 = unlimited (use the dbms default sizes)
	// Password the server requires from every client; "" = none (tests of a bare DBMS).
	// ConfigFiles may put it in a file: platforms write config files readable only by the
	// server's user, and hash them with TemplateHash.
	Password string
}

// DBMS is one database system.
//
// Contract: every method is a pure description except Ready and Bootstrap, which talk to a
// running server. Commands are argv vectors, run as User unless said otherwise.
type DBMS interface {
	Name() string
	// Packages are the Debian packages that provide the server and the client tools.
	Packages() []string
	// ServerPackage is the package whose version must be identical natively and in images.
	ServerPackage() string
	// User is the system account the server runs as (created by the Debian package).
	User() string
	// DefaultPort is the port the server listens on inside a box.
	DefaultPort() int
	// InitCommands create an empty data directory at l.DataDir, run as User. The stdin of
	// each command is given beside it (nil for none).
	InitCommands(l Layout) []Step
	// ConfigFiles are the files boxbench owns, relative to the data directory.
	ConfigFiles(s Settings) map[string][]byte
	// StartCommand runs the server in the foreground.
	StartCommand(l Layout) []string
	// VersionCommand prints the server's version.
	VersionCommand() []string
	// StopSignal asks the server for a clean, durable shutdown.
	StopSignal() syscall.Signal
	// Client returns the credentials a client uses.
	Client() driver.Credentials
	// Ready returns nil once the server answers a trivial query at ep, connecting with c.
	Ready(ctx context.Context, ep driver.Endpoint, c driver.Credentials) error
	// Traits are what the database can do beyond these methods. A wrapper that embeds a DBMS
	// keeps them; one that changes a trait overrides Traits (WithPassword re-secures each
	// cluster node, Idle drops what needs a server).
	Traits() Traits
}

// Traits are what a database can do or needs beyond the DBMS methods, each zero where absent.
// Callers read them through the package functions (ObserverOf, ClusteredOf, NodeOf,
// ReadyTimeout, ServerBinary, BuiltFiles), never by type-asserting a database.
type Traits struct {
	// Observer reports the server's own counters for the measured window; nil: nothing of
	// its own (see Observer's contract).
	Observer Observer
	// Clustered makes the database a cluster of boxes (package cluster); nil: one server only.
	Clustered Clustered
	// ReadyTimeout is how long the server may take to answer its readiness probe when that is
	// longer than the platforms' default (a node of a Cassandra ring); 0: the default.
	ReadyTimeout time.Duration
	// ServerBinary is the server's executable when the start command's first word is not it
	// (a script of boxbench's, a JVM's launcher); "": that first word.
	ServerBinary string
	// BuiltFiles are files that `make setup` builds and caches on the host when the server is
	// not (only) a Debian package; they run from the same absolute paths natively and in every
	// image (rootfs copies them into the tree and hashes them into its recipe). nil: Debian
	// packages only.
	BuiltFiles []string
	// Socket is the client's unix-socket endpoint relative to Layout.RunDir, as the driver
	// takes it ("." for the directory itself, which pgx takes; etcd names a unix listener
	// host:port); "" when the server has no unix socket, for the reason NoSocket gives.
	Socket   string
	NoSocket string
	// ScansPerKey is the validity warning of a database whose every keyed operation makes the
	// server read the whole data set (latency grows with the data set, not the operation); nil:
	// it does not. The checks raise it, with the database's own code, whenever operations ran
	// (check.Facts.ScansPerKey), without knowing which database it is.
	ScansPerKey *ScansPerKey
	// WindowRules are the validity rules on the Observer's metrics (rules.go), applied in order
	// to each server of the cell; nil: none.
	WindowRules []WindowRule
}

// ScansPerKey is the warning a database offers when every keyed operation reads the whole data
// set (Traits.ScansPerKey).
type ScansPerKey struct {
	// Code is the warning's stable identifier in results files (check.Warning.Code).
	Code string
	// Why says why every keyed operation reads the whole data set, naming the server; the
	// warning's message ends with it.
	Why string
}

// UnixSocket is where a client reaches d's server over a unix socket in layout l
// (Traits.Socket), or an error saying why it has none.
func UnixSocket(d DBMS, l Layout) (string, error) {
	t := d.Traits()
	if t.Socket == "" {
		why := t.NoSocket
		if why == "" {
			why = "no unix socket is described"
		}
		return "", fmt.Errorf("%s has no unix socket (%s): network=host", d.Name(), why)
	}
	return filepath.Join(l.RunDir, t.Socket), nil
}

// Step is one command with optional standard input.
type Step struct {
	Argv  []string
	Stdin []byte
}

// ConfigHash identifies a rendered configuration: the sha256 of the files, in name order.
func ConfigHash(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// BuiltFiles returns d's built files (Traits.BuiltFiles; nil for a database made of Debian
// packages only), the same through the wrappers (WithPassword, Idle), which run the same image.
func BuiltFiles(d DBMS) []string { return d.Traits().BuiltFiles }
