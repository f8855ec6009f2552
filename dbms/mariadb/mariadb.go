// Package mariadb describes Debian's MariaDB 10.11 to every platform (package dbms).
package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
	"github.com/boxbench/boxbench/internal/liblog"
)

// MariaDB is Debian's mariadb-server 10.11.
type MariaDB struct{}

func (MariaDB) Name() string { return "mariadb" }

// Traits: a unix socket (StartCommand).
func (MariaDB) Traits() dbms.Traits { return dbms.Traits{Socket: "mysqld.sock"} }

func (MariaDB) Packages() []string         { return []string{"mariadb-server", "mariadb-client"} }
func (MariaDB) ServerPackage() string      { return "mariadb-server" }
func (MariaDB) User() string               { return "mysql" }
func (MariaDB) DefaultPort() int           { return 3306 }
func (MariaDB) StopSignal() syscall.Signal { return syscall.SIGTERM }
func (MariaDB) VersionCommand() []string   { return []string{"/usr/sbin/mariadbd", "--version"} }
func (MariaDB) Client() driver.Credentials {
	return driver.Credentials{User: "boxbench", Database: "ycsb"}
}

const mariadbConf = "boxbench.cnf"

// InitCommands install the system tables, then create the benchmark user and database with the
// server in bootstrap mode (no network, no grant checks).
func (MariaDB) InitCommands(l dbms.Layout) []dbms.Step {
	return []dbms.Step{
		{Argv: []string{"/usr/bin/mariadb-install-db", "--no-defaults", "--datadir=" + l.DataDir,
			"--auth-root-authentication-method=socket", "--skip-test-db"}},
		{Argv: []string{"/usr/sbin/mariadbd", "--no-defaults", "--datadir=" + l.DataDir,
			"--bootstrap", "--skip-networking"},
			Stdin: []byte("FLUSH PRIVILEGES;\nCREATE DATABASE IF NOT EXISTS ycsb;\n" +
				"CREATE USER IF NOT EXISTS 'boxbench'@'%';\n" +
				"GRANT ALL PRIVILEGES ON *.* TO 'boxbench'@'%';\n" +
				"CREATE USER IF NOT EXISTS 'boxbench'@'localhost';\n" +
				"GRANT ALL PRIVILEGES ON *.* TO 'boxbench'@'localhost';\nFLUSH PRIVILEGES;\n")},
	}
}

// ConfigFiles: InnoDB's buffer pool takes half the memory limit; the log is flushed at every
// commit (durable, like PostgreSQL's synchronous_commit).
func (MariaDB) ConfigFiles(s dbms.Settings) map[string][]byte {
	bp := "128M"
	if s.MemoryBytes > 0 {
		bp = strconv.FormatInt(s.MemoryBytes/2/1024/1024, 10) + "M"
	}
	conf := fmt.Sprintf(`# written by boxbench; identical on every platform
[mysqld]
innodb_buffer_pool_size = %s
innodb_log_file_size = 256M
innodb_flush_log_at_trx_commit = 1
max_connections = 200
skip_name_resolve = ON
performance_schema = OFF
`, bp)
	files := map[string][]byte{mariadbConf: []byte(conf)}
	if s.Password != "" {
		files[dbms.CredentialFile] = []byte("FLUSH PRIVILEGES;\n" +
			"ALTER USER 'boxbench'@'%' IDENTIFIED BY '" + s.Password + "';\n" +
			"ALTER USER 'boxbench'@'localhost' IDENTIFIED BY '" + s.Password + "';\nFLUSH PRIVILEGES;\n")
		files[dbms.PasswordScript] = dbms.PasswordScriptFor(`/usr/sbin/mariadbd --defaults-file="$d/` + mariadbConf +
			`" --datadir="$d" --bootstrap --skip-networking`)
	}
	return files
}

func (MariaDB) StartCommand(l dbms.Layout) []string {
	argv := []string{"/usr/sbin/mariadbd", "--defaults-file=" + l.DataDir + "/" + mariadbConf,
		"--datadir=" + l.DataDir, "--port=" + strconv.Itoa(l.Port), "--bind-address=" + l.Listen,
		"--socket=" + l.RunDir + "/mysqld.sock", "--pid-file=" + l.RunDir + "/mysqld.pid"}
	if !l.SetPassword {
		return argv
	}
	// The password goes in through bootstrap mode (no network, no grant checks), with the
	// run's own configuration so that InnoDB keeps its log size.
	return dbms.SetPasswordFirst(l.DataDir, argv)
}

// DSN returns a go-sql-driver DSN for ep and c.
func (m MariaDB) DSN(ep driver.Endpoint, c driver.Credentials) string {
	return config(ep, c).FormatDSN()
}

// config is go-sql-driver's configuration for ep and c. Its logger is boxbench's (debug
// level): the driver would print a server that closes a connection to stderr by itself.
func config(ep driver.Endpoint, c driver.Credentials) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.DBName, cfg.Passwd = c.User, c.Database, c.Password
	cfg.Net, cfg.Addr = "tcp", ep.String()
	if ep.Unix != "" {
		cfg.Net, cfg.Addr = "unix", ep.Unix
	}
	cfg.Logger = liblog.Printer("mysql")
	return cfg
}

func (m MariaDB) Ready(ctx context.Context, ep driver.Endpoint, c driver.Credentials) error {
	conn, err := mysql.NewConnector(config(ep, c))
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	return db.PingContext(ctx)
}
