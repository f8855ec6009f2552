package dbms

import (
	"strings"
	"testing"
)

func peers3(host func(i int) string, port func(i int, l string) int) []Peer {
	var ps []Peer
	for i := 0; i < 3; i++ {
		ps = append(ps, Peer{Name: []string{"n1", "n2", "n3"}[i], Host: host(i),
			Ports: map[string]int{PortClient: port(i, PortClient), "peer": port(i, "peer")}})
	}
	return ps
}

// TestEtcdNode: each member's script names itself, every peer, and listens where its peers
// reach it; only the first member sets the password.
func TestEtcdNode(t *testing.T) {
	loop := peers3(func(int) string { return "127.0.0.1" }, func(i int, l string) int {
		if l == "peer" {
			return 7000 + i
		}
		return 6000 + i
	})
	d := WithPassword(Etcd{}, "secret")
	for i := range loop {
		n, err := NodeOf(d, Topology{Nodes: 3}, i, loop)
		if err != nil {
			t.Fatal(err)
		}
		script := string(n.ConfigFiles(Settings{})[etcdScript])
		for _, want := range []string{"--name n" + string(rune('1'+i)),
			"--initial-cluster n1=http://127.0.0.1:7000,n2=http://127.0.0.1:7001,n3=http://127.0.0.1:7002",
			"--listen-peer-urls http://127.0.0.1:700" + string(rune('0'+i))} {
			if !strings.Contains(script, want) {
				t.Errorf("node %d script lacks %q", i, want)
			}
		}
		argv := n.StartCommand(Layout{DataDir: "/d", RunDir: "/r", Listen: "127.0.0.1", Port: 6000 + i})
		setsPassword := argv[len(argv)-1] == "setpassword"
		_, hasCred := n.ConfigFiles(Settings{})[credentialFile]
		if setsPassword != (i == 0) || hasCred != (i == 0) {
			t.Errorf("node %d: sets the password %v (credential file %v), want only the first", i, setsPassword, hasCred)
		}
		if waits := argv[len(argv)-1] == "waitauth"; waits != (i > 0) {
			t.Errorf("node %d: waits for authentication before serving: %v, want every member but the first", i, waits)
		}
		if n.Client().Password != "secret" {
			t.Errorf("node %d lost the client's password", i)
		}
	}
	// On a cluster network: peers by name, listening on every address of the box.
	named := peers3(func(i int) string { return []string{"n1", "n2", "n3"}[i] }, func(_ int, l string) int { return Etcd{}.ClusterPorts()[l] })
	n, _ := NodeOf(Etcd{}, Topology{Nodes: 3}, 1, named)
	script := string(n.ConfigFiles(Settings{})[etcdScript])
	if !strings.Contains(script, "--listen-peer-urls http://0.0.0.0:2380 --initial-advertise-peer-urls http://n2:2380") {
		t.Errorf("named member's peer URLs:\n%s", script)
	}
}

// TestRedisReplica: replicas follow the first node, with the run's password as masterauth.
func TestRedisReplica(t *testing.T) {
	ps := peers3(func(int) string { return "127.0.0.1" }, func(i int, _ string) int { return 6000 + i })
	d := WithPassword(Redis{}, "secret")
	for i := range ps {
		n, _ := NodeOf(d, Topology{Nodes: 3}, i, ps)
		conf := string(n.ConfigFiles(Settings{Password: "secret"})["redis.conf"])
		replica := strings.Contains(conf, "replicaof 127.0.0.1 6000\n") && strings.Contains(conf, "masterauth secret\n")
		if replica != (i > 0) {
			t.Errorf("node %d: replica %v:\n%s", i, replica, conf)
		}
	}
}

func TestParseInfo(t *testing.T) {
	m := parseInfo("# Replication\r\nrole:master\r\nconnected_slaves:1\r\nslave0:ip=127.0.0.1,port=6001,state=online,offset=42,lag=0\r\n")
	if m["role"] != "master" || !strings.Contains(m["slave0"], "state=online") {
		t.Errorf("%v", m)
	}
}

// TestPostgreSQLNodes: the primary allows replication and, when synchronous, names the
// standbys (and sets its password with a local commit); a standby backs the primary up.
func TestPostgreSQLNodes(t *testing.T) {
	ps := peers3(func(int) string { return "127.0.0.1" }, func(i int, _ string) int { return 6000 + i })
	yes := true
	d := WithPassword(PostgreSQL{}, "secret")
	p, _ := NodeOf(d, Topology{Nodes: 3, Synchronous: &yes}, 0, ps)
	f := p.ConfigFiles(Settings{})
	if !strings.Contains(string(f["postgresql.conf"]), "synchronous_standby_names = 'ANY 1 (n2, n3)'") ||
		!strings.Contains(string(f["pg_hba.conf"]), "host replication boxbench 0.0.0.0/0 scram-sha-256") ||
		!strings.HasPrefix(string(f[credentialFile]), "SET synchronous_commit = local;") {
		t.Errorf("primary:\n%s\n%s\n%s", f["postgresql.conf"], f["pg_hba.conf"], f[credentialFile])
	}
	s, _ := NodeOf(d, Topology{Nodes: 3}, 2, ps)
	f = s.ConfigFiles(Settings{})
	script := string(f[pgStandbyScript])
	if !strings.Contains(script, "pg_basebackup\" -h 127.0.0.1 -p 6000") || !strings.Contains(script, "cluster_name=n3") ||
		string(f[pgReplicationPassword]) != "secret\n" || f[credentialFile] != nil || len(s.InitCommands(Layout{})) != 0 {
		t.Errorf("standby:\n%s", script)
	}
	if argv := s.StartCommand(Layout{DataDir: "/d", SetPassword: true}); argv[1] != "/d/"+pgStandbyScript {
		t.Errorf("standby start %v", argv)
	}
}

// TestCassandraNodes: every node's yaml names the seed n1 and its own addresses and ports, its
// own share of tokens (all distinct, evenly spaced over the Murmur3 range), no bootstrap, and
// every node sets the run's role itself with system_auth replicated to every node.
func TestCassandraNodes(t *testing.T) {
	loop := []Peer{}
	for i := range 3 {
		loop = append(loop, Peer{Name: "n" + string(rune('1'+i)), Host: "127.0.0.1",
			Ports: map[string]int{PortClient: 9100 + i, portStorage: 7100 + i}})
	}
	d := WithPassword(Cassandra{}, "0123456789abcdef")
	topo := Topology{Nodes: 3, ReplicationFactor: 2}
	seen := map[string]bool{}
	for i := range loop {
		n, err := NodeOf(d, topo, i, loop)
		if err != nil {
			t.Fatal(err)
		}
		files := n.ConfigFiles(Settings{MemoryBytes: 1 << 30, Password: "0123456789abcdef"})
		y := string(files[cassandraYAML])
		for _, want := range []string{`seeds: "127.0.0.1:7100"`, "listen_address: 127.0.0.1\n",
			"storage_port: 710" + string(rune('0'+i)) + "\n", "native_transport_port: 910" + string(rune('0'+i)) + "\n",
			"auto_bootstrap: false\n", "authenticator: PasswordAuthenticator\n"} {
			if !strings.Contains(y, want) {
				t.Errorf("node %d yaml lacks %q:\n%s", i, want, y)
			}
		}
		if !strings.Contains(string(files[cassandraScript]), "-Dcassandra.system_auth.default_rf=3") ||
			strings.Contains(string(files[cassandraScript]), "storage_port=0") {
			t.Errorf("node %d script: system_auth not on every node, or the storage port left to chance", i)
		}
		if _, ok := files[credentialFile]; !ok {
			t.Errorf("node %d does not set the run's role", i)
		}
		for _, tok := range CassandraTokens(3, i) {
			if seen[tok] {
				t.Errorf("token %s given twice", tok)
			}
			seen[tok] = true
			if !strings.Contains(y, tok) {
				t.Errorf("node %d yaml lacks its token %s", i, tok)
			}
		}
	}
	if len(seen) != 3*cassandraNumTokens {
		t.Errorf("%d tokens, want %d", len(seen), 3*cassandraNumTokens)
	}
	if first := CassandraTokens(3, 0)[0]; first != "-9223372036854775808" {
		t.Errorf("the first token is %s, want the range's start", first)
	}
	// On a cluster network: addresses by name, CQL on every address of the box.
	named := []Peer{{Name: "n1", Host: "n1", Ports: Cassandra{}.ClusterPorts()}, {Name: "n2", Host: "n2", Ports: Cassandra{}.ClusterPorts()}}
	n := Cassandra{}.Node(Topology{Nodes: 2, ReplicationFactor: 1}, 1, named)
	y := string(n.ConfigFiles(Settings{})[cassandraYAML])
	for _, want := range []string{`seeds: "n1:7000"`, "listen_address: n2\n", "rpc_address: 0.0.0.0\n", "broadcast_rpc_address: n2\n", "native_transport_port: 9042\n"} {
		if !strings.Contains(y, want) {
			t.Errorf("named node yaml lacks %q:\n%s", want, y)
		}
	}
}

// TestCassandraCheckTopology: nodes, replication factor and consistency are checked together.
func TestCassandraCheckTopology(t *testing.T) {
	for _, tc := range []struct {
		t    Topology
		want string
	}{
		{Topology{Nodes: 3, ReplicationFactor: 2}, ""},
		{Topology{Nodes: 3, ReplicationFactor: 2, Consistency: "all"}, ""},
		{Topology{Nodes: 3, ReplicationFactor: 3, Consistency: "THREE"}, ""},
		{Topology{Nodes: 1, ReplicationFactor: 1}, "topology.nodes: 1 is not valid for cassandra"},
		{Topology{Nodes: 3}, "topology.replicationFactor: missing"},
		{Topology{Nodes: 3, ReplicationFactor: 4}, "topology.replicationFactor: 4 is not valid for a ring of 3 nodes (valid: 1 to 3)"},
		{Topology{Nodes: 3, ReplicationFactor: 1, Consistency: "TWO"}, "workload.consistency: TWO waits for 2 replicas, but topology.replicationFactor 1 keeps only 1"},
	} {
		got := strings.Join(Cassandra{}.CheckTopology(tc.t), "; ")
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.t, got, tc.want)
		}
	}
	if p := (Etcd{}).CheckTopology(Topology{Nodes: 3, ReplicationFactor: 2}); len(p) != 1 {
		t.Errorf("etcd took a replication factor: %v", p)
	}
}
