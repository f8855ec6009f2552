package redis

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

// TestRedisReplica: replicas follow the first node, with the run's password as masterauth.
func TestRedisReplica(t *testing.T) {
	ps := peers3(func(int) string { return "127.0.0.1" }, func(i int, _ string) int { return 6000 + i })
	d := dbms.WithPassword(Redis{}, "secret")
	for i := range ps {
		n, _ := dbms.NodeOf(d, dbms.Topology{Nodes: 3}, i, ps)
		conf := string(n.ConfigFiles(dbms.Settings{Password: "secret"})["redis.conf"])
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
