package spec

import (
	"strings"
)

// Topology runs the database as a cluster of boxes (docs/topology.md): Nodes servers, each a
// box of the cell's platform with the cell's limits. Which values are valid is the database's
// own rule (Vocabulary.Topology); Synchronous applies to PostgreSQL's standbys,
// ReplicationFactor to a Cassandra ring (its keyspace's replicas of every row).
type Topology struct {
	Nodes             int   `yaml:"nodes"`
	Synchronous       *bool `yaml:"synchronous"`
	ReplicationFactor int   `yaml:"replicationFactor"`
	// Consistency is not a field of the spec: the checker sets it from each workload's
	// consistency, so that the database can check the level against the replication factor.
	Consistency string `yaml:"-"`
}

// topology checks the topology against every dbms and platform of the matrix.
func (c *checker) topology() {
	e := c.e
	t := e.Topology
	if t == nil {
		return
	}
	dbs := []string{e.DBMS}
	if e.varies("dbms") {
		dbs = e.ValuesOf("dbms")
	}
	for _, d := range dbs {
		if d == "" || !contains(e.vocab.DBMSs, d) || e.vocab.Topology == nil {
			continue
		}
		seen := map[string]bool{}
		for path, w := range e.usedWorkloads() {
			tt := *t
			tt.Consistency = w.Consistency
			for _, m := range e.vocab.Topology(d, tt) {
				field := "topology"
				if f, rest, ok := strings.Cut(m, ": "); ok && strings.HasPrefix(f, "topology.") {
					field, m = f, rest
				} else if ok && f == "workload.consistency" {
					field, m = path+".consistency", rest
				}
				if !seen[field+m] {
					seen[field+m] = true
					c.add(field, "%s", m)
				}
			}
		}
	}
	platforms := []string{e.DefaultPlatform()}
	if e.varies("platform") {
		platforms = e.ValuesOf("platform")
	}
	for _, p := range platforms {
		if w, ok := e.vocab.Platforms[p]; ok && !w.Clusters {
			c.add("topology", "platform %s does not run topologies yet (valid: %s); leave topology out for it or remove it from the matrix",
				p, strings.Join(e.vocab.clusterPlatforms(), ", "))
		}
	}
	if e.varies("network") && contains(e.ValuesOf("network"), "unix") {
		c.add("topology", "network unix cannot carry a cluster: its nodes talk over TCP (valid: host, bridge-published, bridge-direct)")
	}
}

func (v Vocabulary) clusterPlatforms() []string {
	var out []string
	for _, n := range v.PlatformNames() {
		if v.Platforms[n].Clusters {
			out = append(out, n)
		}
	}
	return out
}
