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
			tt.Consistency = e.FactsOf(w).Consistency
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
	if e.varies("network") {
		for _, pn := range e.platformNetworks(platforms) {
			w, ok := e.vocab.Platforms[pn[0]]
			if why, refused := w.ClusterRefuses[pn[1]]; ok && w.Clusters && refused {
				c.add("topology", "platform %s network %s cannot carry a cluster: %s", pn[0], pn[1], why)
			}
		}
	}
}

// platformNetworks are the (platform, network) pairs of the matrix: index by index when a zip
// pairs them, every combination otherwise.
func (e *Experiment) platformNetworks(platforms []string) [][2]string {
	var zp, zn []string
	for _, d := range e.Matrix.Zip {
		switch d.Key {
		case "platform":
			zp = d.Values
		case "network":
			zn = d.Values
		}
	}
	var out [][2]string
	if zp != nil && zn != nil {
		for i := range min(len(zp), len(zn)) {
			out = append(out, [2]string{zp[i], zn[i]})
		}
		return out
	}
	seen := map[[2]string]bool{}
	for _, p := range platforms {
		for _, n := range e.ValuesOf("network") {
			if pn := [2]string{p, n}; !seen[pn] {
				seen[pn] = true
				out = append(out, pn)
			}
		}
	}
	return out
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
