// Package postgresql describes Debian's PostgreSQL 15 to every platform (package dbms): its
// packages, configuration, start and readiness (postgresql.go), its checkpointer's counters
// (observer.go) and a primary with streaming standbys as a topology (cluster.go).
package postgresql

import (
	"context"
	"fmt"
	"strconv"
	"syscall"

	"github.com/jackc/pgx/v5"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// PostgreSQL is Debian's PostgreSQL 15.
type PostgreSQL struct{}

// Bin is the directory of PostgreSQL 15's programs (Debian's layout), ending in a slash.
const Bin = "/usr/lib/postgresql/15/bin/"

func (PostgreSQL) Name() string { return "postgresql" }

// Traits: its own counters (observer.go) and the rule on them (rules.go), a primary with streaming standbys, sockets in
// the run directory.
func (p PostgreSQL) Traits() dbms.Traits {
	return dbms.Traits{Observer: p, WindowRules: windowRules, Clustered: p, Socket: "."} // pgx takes the socket directory
}

func (PostgreSQL) Packages() []string    { return []string{"postgresql-15", "postgresql-client-15"} }
func (PostgreSQL) ServerPackage() string { return "postgresql-15" }
func (PostgreSQL) User() string          { return "postgres" }
func (PostgreSQL) DefaultPort() int      { return 5432 }
func (PostgreSQL) StopSignal() syscall.Signal {
	return syscall.SIGINT // "fast" shutdown: checkpoint, then exit
}
func (PostgreSQL) VersionCommand() []string { return []string{Bin + "postgres", "--version"} }
func (PostgreSQL) Client() driver.Credentials {
	return driver.Credentials{User: "boxbench", Database: "postgres"}
}

func (PostgreSQL) InitCommands(l dbms.Layout) []dbms.Step {
	return []dbms.Step{{Argv: []string{Bin + "initdb", "-D", l.DataDir, "-U", "boxbench",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-instructions"}}}
}

// ConfigFiles returns postgresql.conf and pg_hba.conf. shared_buffers is a quarter of the
// memory limit (PostgreSQL's own guidance), effective_cache_size three quarters.
func (PostgreSQL) ConfigFiles(s dbms.Settings) map[string][]byte {
	sb, ecs := "128MB", "4GB"
	if s.MemoryBytes > 0 {
		sb = strconv.FormatInt(s.MemoryBytes/4/1024, 10) + "kB"
		ecs = strconv.FormatInt(s.MemoryBytes*3/4/1024, 10) + "kB"
	}
	conf := fmt.Sprintf(`# written by boxbench; identical on every platform
max_connections = 200
shared_buffers = %s
effective_cache_size = %s
wal_level = replica
synchronous_commit = on
fsync = on
full_page_writes = on
checkpoint_timeout = 15min
max_wal_size = 4GB
log_destination = 'stderr'
logging_collector = off
log_min_messages = warning
`, sb, ecs)
	if s.Password == "" { // a bare PostgreSQL (tests only): any client
		hba := "# written by boxbench: benchmark servers trust their clients\n" +
			"local all all trust\nhost all all 0.0.0.0/0 trust\nhost all all ::/0 trust\n"
		return map[string][]byte{"postgresql.conf": []byte(conf), "pg_hba.conf": []byte(hba)}
	}
	conf += "password_encryption = scram-sha-256\n"
	hba := "# written by boxbench: every client needs the run's password\n" +
		"local all all scram-sha-256\nhost all all 0.0.0.0/0 scram-sha-256\nhost all all ::/0 scram-sha-256\n"
	sql := "ALTER ROLE boxbench PASSWORD '" + s.Password + "';\n"
	return map[string][]byte{"postgresql.conf": []byte(conf), "pg_hba.conf": []byte(hba), dbms.CredentialFile: []byte(sql),
		dbms.PasswordScript: dbms.PasswordScriptFor(Bin + `postgres --single -D "$d" postgres`)}
}

func (PostgreSQL) StartCommand(l dbms.Layout) []string {
	argv := []string{Bin + "postgres", "-D", l.DataDir, "-p", strconv.Itoa(l.Port),
		"-c", "listen_addresses=" + l.Listen, "-c", "unix_socket_directories=" + l.RunDir}
	if !l.SetPassword {
		return argv
	}
	// The password goes in through single-user mode (no network) from the credential file,
	// which is then removed; the data directory is 0700, so only the server's user reads it.
	return dbms.SetPasswordFirst(l.DataDir, argv)
}

func (p PostgreSQL) Ready(ctx context.Context, ep driver.Endpoint, c driver.Credentials) error {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return err
	}
	cfg.User, cfg.Database, cfg.Password = c.User, c.Database, c.Password
	cfg.Host, cfg.Port = ep.Host, uint16(ep.Port)
	if ep.Unix != "" {
		cfg.Host = ep.Unix
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var one int
	return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
}
