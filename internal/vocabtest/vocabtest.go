// Package vocabtest holds the spec vocabulary of this build's built-in parts for tests of
// packages that package builtin imports (and so cannot import it). builtin's tests check that
// it matches builtin.Vocabulary.
package vocabtest

import (
	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/builtin/workloads"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/spec"
)

// Vocabulary is the built-in vocabulary.
func Vocabulary() spec.Vocabulary {
	return spec.Vocabulary{
		DBMSs:         databases.Names(),
		Baseline:      "native",
		Consistencies: databases.Consistencies(databases.All()),
		Workloads:     workloads.Vocabulary(workloads.All()),
		Topology: func(name string, t spec.Topology) []string {
			return databases.CheckTopology(databases.All(), name, dbms.Topology{Nodes: t.Nodes, Synchronous: t.Synchronous})
		},
		Platforms: map[string]spec.PlatformWords{
			"native": {Storages: []string{"bind", "tmpfs", "blockdev"}, Networks: []string{"host", "unix", "netns"}, Clusters: true,
				ClusterRefuses: map[string]string{"unix": "its nodes talk to each other over TCP (use host)"}},
			"docker": {Storages: []string{"overlay", "bind", "volume", "tmpfs", "blockdev"},
				Networks: []string{"host", "bridge-published", "bridge-direct"}, Clusters: true},
		},
	}
}
