package postgresql

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// PostgreSQL as a topology: node n1 is the primary, every other node a hot standby that
// streams its WAL (pg_basebackup -R, then streaming replication). With synchronous: true each
// commit waits until one standby has flushed it (synchronous_standby_names = 'ANY 1 (…)').
// The client reads and writes on the primary.

const (
	pgMaxNodes      = 5
	pgStandbyScript = "boxbench-standby.sh"
	// pgReplicationPassword keeps the run's password for the standby's base backup, in the
	// data directory (0600, the server's user); pg_basebackup -R writes it into the standby's
	// primary_conninfo (postgresql.auto.conf, in the same private directory).
	pgReplicationPassword = "boxbench-replication-password"
)

func (PostgreSQL) CheckTopology(t dbms.Topology) []string {
	var p []string
	if t.Nodes < 2 || t.Nodes > pgMaxNodes {
		p = append(p, fmt.Sprintf("topology.nodes: %d is not valid for postgresql (valid: 2 to %d: one primary and its streaming standbys)", t.Nodes, pgMaxNodes))
	}
	return append(p, dbms.NotRing("postgresql", t)...)
}

func (PostgreSQL) ClusterPorts() map[string]int {
	return map[string]int{dbms.PortClient: PostgreSQL{}.DefaultPort()}
}

func (PostgreSQL) ClientNodes(t dbms.Topology) ([]int, string) {
	what := "the client reads and writes on the primary (n1) only; the standbys replay its WAL (streaming replication, asynchronous: a commit does not wait for them) and serve no client reads"
	if t.Synchronous != nil && *t.Synchronous {
		what = "the client reads and writes on the primary (n1) only; each commit waits until one standby has flushed its WAL (synchronous_standby_names = ANY 1 of the standbys); the standbys serve no client reads"
	}
	return []int{0}, what
}

func (PostgreSQL) Node(t dbms.Topology, i int, peers []dbms.Peer) dbms.DBMS {
	if i == 0 {
		var sync []string
		if t.Synchronous != nil && *t.Synchronous {
			for _, p := range peers[1:] {
				sync = append(sync, p.Name)
			}
		}
		return pgPrimary{sync: sync}
	}
	return pgStandby{name: peers[i].Name, primary: peers[0]}
}

// pgPrimary is the single server's configuration with replication allowed from the nodes
// (the boxbench role, a superuser, with the run's password) and, when synchronous, the
// standbys that acknowledge commits.
type pgPrimary struct {
	PostgreSQL
	sync []string
}

func (p pgPrimary) ConfigFiles(s dbms.Settings) map[string][]byte {
	files := p.PostgreSQL.ConfigFiles(s)
	conf := string(files["postgresql.conf"]) + "max_wal_senders = 10\nwal_keep_size = 256MB\n"
	if len(p.sync) > 0 {
		conf += "synchronous_standby_names = 'ANY 1 (" + strings.Join(p.sync, ", ") + ")'\n"
		if sql, ok := files[dbms.CredentialFile]; ok {
			// The password goes in through single-user mode, where no standby can ever answer:
			// that one commit is local.
			files[dbms.CredentialFile] = append([]byte("SET synchronous_commit = local;\n"), sql...)
		}
	}
	method := "trust"
	if s.Password != "" {
		method = "scram-sha-256"
	}
	hba := string(files["pg_hba.conf"]) + "host replication boxbench 0.0.0.0/0 " + method + "\nhost replication boxbench ::/0 " + method + "\n"
	files["postgresql.conf"], files["pg_hba.conf"] = []byte(conf), []byte(hba)
	return files
}

// pgStandby is a hot standby of primary: its start script takes a base backup of the primary
// into DataDir/base once the primary answers (the nodes start together), then runs the server
// on it with boxbench's configuration files from DataDir. The role and its password come from
// the primary: the standby sets none.
type pgStandby struct {
	PostgreSQL
	name    string
	primary dbms.Peer
}

// InitCommands: none; the base backup is the standby's data directory.
func (pgStandby) InitCommands(dbms.Layout) []dbms.Step { return nil }

func (n pgStandby) ConfigFiles(s dbms.Settings) map[string][]byte {
	files := PostgreSQL{}.ConfigFiles(s)
	delete(files, dbms.CredentialFile)
	delete(files, dbms.PasswordScript)
	if s.Password != "" {
		files[pgReplicationPassword] = []byte(s.Password + "\n")
	}
	host, port := n.primary.Host, strconv.Itoa(n.primary.Port(dbms.PortClient))
	files[pgStandbyScript] = []byte(`# written by boxbench: a streaming standby of the primary ` + net.JoinHostPort(host, port) + `
# usage: sh boxbench-standby.sh DATADIR RUNDIR PORT LISTEN
set -u
d=$1; run=$2; port=$3; listen=$4
b=` + Bin + `
umask 077
if [ ! -f "$d/base/PG_VERSION" ]; then
  if [ -f "$d/` + pgReplicationPassword + `" ]; then PGPASSWORD=$(cat "$d/` + pgReplicationPassword + `"); export PGPASSWORD; fi
  i=0
  # Giving up, it says what the last try saw (no response or rejecting) and what the primary's
  # name resolves to: a standby that never reached its primary is told apart from a primary
  # that never came up.
  until ready=$("$b/pg_isready" -h ` + host + ` -p ` + port + ` -t 2 2>&1); do
    i=$((i+1)); [ $i -gt 1500 ] && { echo "boxbench: the primary ` + net.JoinHostPort(host, port) + ` never answered (last: $ready; ` + host + ` resolves to: $(getent hosts ` + host + ` || echo nothing))" >&2; exit 1; }
    sleep 0.2
  done
  i=0
  until rm -rf "$d/base" && "$b/pg_basebackup" -h ` + host + ` -p ` + port + ` -U boxbench -D "$d/base" -X stream -R -c fast; do
    i=$((i+1)); [ $i -gt 30 ] && { echo "boxbench: pg_basebackup from the primary failed" >&2; exit 1; }
    sleep 1
  done
  unset PGPASSWORD
fi
exec "$b/postgres" -D "$d/base" -c config_file="$d/postgresql.conf" -c hba_file="$d/pg_hba.conf" \
  -c cluster_name=` + n.name + ` -p "$port" -c listen_addresses="$listen" -c unix_socket_directories="$run"
`)
	return files
}

func (n pgStandby) StartCommand(l dbms.Layout) []string {
	return []string{"/bin/sh", l.DataDir + "/" + pgStandbyScript, l.DataDir, l.RunDir, strconv.Itoa(l.Port), l.Listen}
}

// ClusterReady: the primary's pg_stat_replication lists every standby streaming (and, when
// synchronous, each as a sync or quorum candidate), and every standby is in recovery.
func (PostgreSQL) ClusterReady(ctx context.Context, t dbms.Topology, eps []driver.Endpoint, c driver.Credentials) (map[string]string, error) {
	conn := func(ep driver.Endpoint) (*pgx.Conn, error) {
		cfg, err := pgx.ParseConfig("")
		if err != nil {
			return nil, err
		}
		cfg.User, cfg.Database, cfg.Password = c.User, c.Database, c.Password
		cfg.Host, cfg.Port = ep.Host, uint16(ep.Port)
		return pgx.ConnectConfig(ctx, cfg)
	}
	pc, err := conn(eps[0])
	if err != nil {
		return nil, fmt.Errorf("primary n1: %w", err)
	}
	defer pc.Close(context.Background())
	rows, err := pc.Query(ctx, "SELECT application_name, state, sync_state FROM pg_stat_replication ORDER BY application_name")
	if err != nil {
		return nil, fmt.Errorf("primary n1: pg_stat_replication: %w", err)
	}
	var got []string
	streaming := 0
	sync := t.Synchronous != nil && *t.Synchronous
	for rows.Next() {
		var name, state, syncState string
		if err := rows.Scan(&name, &state, &syncState); err != nil {
			rows.Close()
			return nil, err
		}
		got = append(got, name+"="+state+"/"+syncState)
		if state == "streaming" && (!sync || syncState == "sync" || syncState == "quorum") {
			streaming++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if streaming != t.Nodes-1 {
		return nil, fmt.Errorf("pg_stat_replication on the primary shows %d of %d standbys streaming (%s)", streaming, t.Nodes-1, strings.Join(got, " "))
	}
	for i, ep := range eps[1:] {
		sc, err := conn(ep)
		if err != nil {
			return nil, fmt.Errorf("standby n%d: %w", i+2, err)
		}
		var rec bool
		err = sc.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&rec)
		sc.Close(context.Background())
		if err != nil || !rec {
			return nil, fmt.Errorf("standby n%d is not in recovery (%v)", i+2, err)
		}
	}
	mode := "asynchronous"
	if sync {
		mode = "synchronous (ANY 1)"
	}
	return map[string]string{"cluster_primary": "n1", "cluster_replication": "streaming, " + mode,
		"cluster_standbys": strings.Join(got, " ")}, nil
}
