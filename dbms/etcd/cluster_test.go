package etcd

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

// TestEtcdNode: each member's script names itself, every peer, and listens where its peers
// reach it; only the first member sets the password.
func TestEtcdNode(t *testing.T) {
	loop := peers3(func(int) string { return "127.0.0.1" }, func(i int, l string) int {
		if l == "peer" {
			return 7000 + i
		}
		return 6000 + i
	})
	d := dbms.WithPassword(Etcd{}, "secret")
	for i := range loop {
		n, err := dbms.NodeOf(d, dbms.Topology{Nodes: 3}, i, loop)
		if err != nil {
			t.Fatal(err)
		}
		script := string(n.ConfigFiles(dbms.Settings{})[etcdScript])
		for _, want := range []string{"--name n" + string(rune('1'+i)),
			"--initial-cluster n1=http://127.0.0.1:7000,n2=http://127.0.0.1:7001,n3=http://127.0.0.1:7002",
			"--listen-peer-urls http://127.0.0.1:700" + string(rune('0'+i))} {
			if !strings.Contains(script, want) {
				t.Errorf("node %d script lacks %q", i, want)
			}
		}
		argv := n.StartCommand(dbms.Layout{DataDir: "/d", RunDir: "/r", Listen: "127.0.0.1", Port: 6000 + i})
		setsPassword := argv[len(argv)-1] == "setpassword"
		_, hasCred := n.ConfigFiles(dbms.Settings{})[dbms.CredentialFile]
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
	n, _ := dbms.NodeOf(Etcd{}, dbms.Topology{Nodes: 3}, 1, named)
	script := string(n.ConfigFiles(dbms.Settings{})[etcdScript])
	if !strings.Contains(script, "--listen-peer-urls http://0.0.0.0:2380 --initial-advertise-peer-urls http://n2:2380") {
		t.Errorf("named member's peer URLs:\n%s", script)
	}
	if p := (Etcd{}).CheckTopology(dbms.Topology{Nodes: 3, ReplicationFactor: 2}); len(p) != 1 {
		t.Errorf("etcd took a replication factor: %v", p)
	}
}
