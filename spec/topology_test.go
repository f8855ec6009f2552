package spec

import (
	"strings"
	"testing"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
)

// topoVocab is the test vocabulary with etcd, platforms that run topologies, and the
// databases' own topology rules.
func topoVocab() Vocabulary {
	v := vocab
	v.DBMSs = append([]string{"cassandra", "etcd"}, vocab.DBMSs...)
	v.Platforms = map[string]PlatformWords{}
	for k, w := range vocab.Platforms {
		w.Clusters = true
		if k == "native" {
			w.ClusterRefuses = map[string]string{"unix": "its nodes talk to each other over TCP (use host)"}
		}
		v.Platforms[k] = w
	}
	v.Platforms["swarm"] = PlatformWords{Storages: []string{"bind"}, Networks: []string{"host", "overlay", "vip"}, Clusters: true,
		ClusterRefuses: map[string]string{"vip": "nodes resolve each other by name"}}
	v.Topology = func(name string, t Topology) []string {
		return databases.CheckTopology(databases.All(), name, dbms.Topology{Nodes: t.Nodes, Synchronous: t.Synchronous,
			ReplicationFactor: t.ReplicationFactor, Consistency: t.Consistency})
	}
	return v
}

const topo = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: t
dbms: etcd
topology: {nodes: 3}
workload: {type: ycsb, mix: write-heavy, duration: 20s}
dataset: {records: 1000}
matrix:
  platform: [native, docker]
`

// TestTopology: a valid topology parses; every problem of a bad one is reported at once, each
// naming the field, the value and what is valid.
func TestTopology(t *testing.T) {
	e, err := Parse([]byte(topo), "t.yaml", topoVocab())
	if err != nil {
		t.Fatal(err)
	}
	if e.Topology == nil || e.Topology.Nodes != 3 {
		t.Fatalf("topology %+v", e.Topology)
	}
	ring := strings.Replace(strings.Replace(topo, "dbms: etcd", "dbms: cassandra", 1), "nodes: 3}", "nodes: 3, replicationFactor: 2}", 1)
	ring = strings.Replace(ring, "write-heavy,", "write-heavy, consistency: QUORUM,", 1)
	if e, err := Parse([]byte(ring), "t.yaml", topoVocab()); err != nil || e.Topology.ReplicationFactor != 2 {
		t.Fatalf("a ring of 3 at RF 2 and QUORUM: %v", err)
	}
	for _, tc := range []struct {
		name, from, to string
		want           []string
	}{
		{"even etcd", "nodes: 3}", "nodes: 4, synchronous: true}",
			[]string{"line 5: topology.nodes: 4 is not valid for etcd", "an odd number from 1 to 7", "topology.synchronous: not valid for etcd"}},
		{"no topology", "dbms: etcd", "dbms: mariadb",
			[]string{"topology: dbms mariadb runs as one server here: it has no topology (databases with one: cassandra, etcd, postgresql, redis)"}},
		{"redis range", "dbms: etcd\ntopology: {nodes: 3}", "dbms: redis\ntopology: {nodes: 9}",
			[]string{"topology.nodes: 9 is not valid for redis (valid: 2 to 5"}},
		{"unix", "platform: [native, docker]", "network: [host, unix]",
			[]string{"platform native network unix cannot carry a cluster: its nodes talk to each other over TCP"}},
		{"unknown field", "nodes: 3}", "nodes: 3, replicas: 2}", []string{"replicas"}},
		{"a platform's network refused", "platform: [native, docker]", "zip: {platform: [native, swarm, swarm], network: [host, overlay, vip]}",
			[]string{"platform swarm network vip cannot carry a cluster: nodes resolve"}},
		{"rf not etcd's", "nodes: 3}", "nodes: 3, replicationFactor: 2}",
			[]string{"topology.replicationFactor: not valid for etcd (every node holds all the data); it applies to cassandra"}},
		{"ring without rf", "dbms: etcd\ntopology: {nodes: 3}", "dbms: cassandra\ntopology: {nodes: 6}",
			[]string{"topology.nodes: 6 is not valid for cassandra (valid: 2 to 5", "topology.replicationFactor: missing"}},
		{"rf over nodes", "dbms: etcd\ntopology: {nodes: 3}", "dbms: cassandra\ntopology: {nodes: 3, replicationFactor: 4}",
			[]string{"topology.replicationFactor: 4 is not valid for a ring of 3 nodes (valid: 1 to 3)"}},
		{"consistency over rf", "dbms: etcd\ntopology: {nodes: 3}\nworkload: {type: ycsb,", "dbms: cassandra\ntopology: {nodes: 3, replicationFactor: 2}\nworkload: {type: ycsb, consistency: THREE,",
			[]string{"line 6: workload.consistency: THREE waits for 3 replicas, but topology.replicationFactor 2 keeps only 2 (valid with it: ANY, ONE, LOCAL_ONE, QUORUM, LOCAL_QUORUM, EACH_QUORUM, ALL, TWO)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(strings.Replace(topo, tc.from, tc.to, 1)), "t.yaml", topoVocab())
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestTopologyPlatform: a platform that runs no topologies is refused with the ones that do.
func TestTopologyPlatform(t *testing.T) {
	v := topoVocab()
	v.Platforms["lxc"] = PlatformWords{Storages: []string{"bind"}, Networks: []string{"host"}}
	_, err := Parse([]byte(strings.Replace(topo, "[native, docker]", "[native, lxc]", 1)), "t.yaml", v)
	if err == nil || !strings.Contains(err.Error(), "platform lxc does not run topologies yet (valid: docker, native, swarm)") {
		t.Errorf("lxc with a topology: %v", err)
	}
}
