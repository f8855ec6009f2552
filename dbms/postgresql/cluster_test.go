package postgresql

import (
	"strings"
	"testing"

	"github.com/boxbench/boxbench/dbms"
)

func peers3(host func(i int) string, port func(i int, l string) int) []dbms.Peer {
	var ps []dbms.Peer
	for i := 0; i < 3; i++ {
		ps = append(ps, dbms.Peer{Name: []string{"n1", "n2", "n3"}[i], Host: host(i),
			Ports: map[string]int{dbms.PortClient: port(i, dbms.PortClient), "peer": port(i, "peer")}})
	}
	return ps
}

// TestPostgreSQLNodes: the primary allows replication and, when synchronous, names the
// standbys (and sets its password with a local commit); a standby backs the primary up.
func TestPostgreSQLNodes(t *testing.T) {
	ps := peers3(func(int) string { return "127.0.0.1" }, func(i int, _ string) int { return 6000 + i })
	yes := true
	d := dbms.WithPassword(PostgreSQL{}, "secret")
	p, _ := dbms.NodeOf(d, dbms.Topology{Nodes: 3, Synchronous: &yes}, 0, ps)
	f := p.ConfigFiles(dbms.Settings{})
	if !strings.Contains(string(f["postgresql.conf"]), "synchronous_standby_names = 'ANY 1 (n2, n3)'") ||
		!strings.Contains(string(f["pg_hba.conf"]), "host replication boxbench 0.0.0.0/0 scram-sha-256") ||
		!strings.HasPrefix(string(f[dbms.CredentialFile]), "SET synchronous_commit = local;") {
		t.Errorf("primary:\n%s\n%s\n%s", f["postgresql.conf"], f["pg_hba.conf"], f[dbms.CredentialFile])
	}
	s, _ := dbms.NodeOf(d, dbms.Topology{Nodes: 3}, 2, ps)
	f = s.ConfigFiles(dbms.Settings{})
	script := string(f[pgStandbyScript])
	if !strings.Contains(script, "pg_basebackup\" -h 127.0.0.1 -p 6000") || !strings.Contains(script, "cluster_name=n3") ||
		string(f[pgReplicationPassword]) != "secret\n" || f[dbms.CredentialFile] != nil || len(s.InitCommands(dbms.Layout{})) != 0 {
		t.Errorf("standby:\n%s", script)
	}
	if argv := s.StartCommand(dbms.Layout{DataDir: "/d", SetPassword: true}); argv[1] != "/d/"+pgStandbyScript {
		t.Errorf("standby start %v", argv)
	}
}
