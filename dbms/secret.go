package dbms

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/boxbench/boxbench/driver"
)

// Redacted stands for the password in a configuration rendered for its hash: the config hash
// of a run must be comparable between platforms and runs, and must not carry the secret.
const Redacted = "REDACTED"

// CredentialFile is the file, in the data directory, that a start command applies to set the
// client's password before the server opens its ports (SQL for PostgreSQL and MariaDB; the
// database's own form for the others); the server's start removes it.
const CredentialFile = "boxbench-credential.sql"

// NewPassword returns a random password for one run: 32 hex digits from the kernel's CSPRNG,
// safe in SQL string literals and configuration files without quoting.
func NewPassword() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux ≥ 3.17
	}
	return hex.EncodeToString(b)
}

// WithPassword is d whose client authenticates with password: the server is configured to
// require it from every client (PostgreSQL scram-sha-256 instead of trust, MariaDB's user
// with a password, Redis requirepass with protected mode), the start command sets it in
// the data directory before the server listens (so a restored seed gets the run's password),
// and Client carries it. The password is never part of the config hash (see ConfigHash and
// Redacted), of a start command's argv, or of a log line.
func WithPassword(d DBMS, password string) DBMS { return secured{d, password} }

type secured struct {
	DBMS
	password string
}

func (s secured) Client() driver.Credentials {
	c := s.DBMS.Client()
	c.Password = s.password
	return c
}

// ConfigFiles renders the configuration with the run's password, unless the caller asks for
// another (Redacted, for the hash).
func (s secured) ConfigFiles(st Settings) map[string][]byte {
	if st.Password == "" {
		st.Password = s.password
	}
	return s.DBMS.ConfigFiles(st)
}

func (s secured) StartCommand(l Layout) []string {
	l.SetPassword = true
	return s.DBMS.StartCommand(l)
}

func (s secured) Ready(ctx context.Context, ep driver.Endpoint, c driver.Credentials) error {
	return s.DBMS.Ready(ctx, ep, c)
}

// TemplateHash is the config hash of d's configuration for settings s, with the password
// replaced by Redacted: what platforms store as the run's config_hash.
func TemplateHash(d DBMS, s Settings) string {
	s.Password = Redacted
	return ConfigHash(d.ConfigFiles(s))
}

// PasswordScript is the file, in the data directory, that a start command runs first when the
// client has a password: it runs apply (a fixed shell command line in which "$d" is the data
// directory: the server in a mode without network) with the credential file on its standard
// input, removes that file, then execs the server (same pid, so the platforms watch and signal
// the server itself). The password is never in an argv. A file rather than an `sh -c` argument:
// LXC's lxc.init.cmd splits its value on blanks.
const PasswordScript = "boxbench-set-password.sh"

// PasswordScriptFor is the content of PasswordScript for the database's apply command line.
func PasswordScriptFor(apply string) []byte {
	return []byte(`# written by boxbench: set the client's password, then start the server
d=$1; shift
` + apply + ` <"$d/` + CredentialFile + `" >/dev/null 2>&1 || { echo "boxbench: setting the client's password failed" >&2; exit 1; }
rm -f "$d/` + CredentialFile + `"
exec "$@"
`)
}

// SetPasswordFirst is the start command that runs PasswordScript, then server.
func SetPasswordFirst(dataDir string, server []string) []string {
	return append([]string{"/bin/sh", dataDir + "/" + PasswordScript, dataDir}, server...)
}

// Traits are the wrapped database's, except that each node of its cluster requires the same
// password, and the server binary is the wrapped start command's (this one runs the password
// script first).
func (s secured) Traits() Traits {
	t := s.DBMS.Traits()
	t.ServerBinary = ServerBinary(s.DBMS)
	if t.Clustered != nil {
		t.Clustered = securedCluster{t.Clustered, s.password}
	}
	return t
}

// securedCluster makes every node of a secured database's cluster secured with its password.
type securedCluster struct {
	Clustered
	password string
}

func (c securedCluster) Node(t Topology, i int, peers []Peer) DBMS {
	return secured{c.Clustered.Node(t, i, peers), c.password}
}
