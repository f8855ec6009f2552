package redis

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// Redis as a topology: node n1 is the primary, every other node a replica of it (replicaof,
// asynchronous replication). The client writes to and reads from the primary.

const redisMaxNodes = 5

func (Redis) CheckTopology(t dbms.Topology) []string {
	var p []string
	if t.Nodes < 2 || t.Nodes > redisMaxNodes {
		p = append(p, fmt.Sprintf("topology.nodes: %d is not valid for redis (valid: 2 to %d: one primary and its replicas)", t.Nodes, redisMaxNodes))
	}
	if t.Synchronous != nil {
		p = append(p, "topology.synchronous: not valid for redis (its replication is asynchronous); it applies to postgresql")
	}
	p = append(p, dbms.NotRing("redis", t)...)
	return p
}

func (Redis) ClusterPorts() map[string]int {
	return map[string]int{dbms.PortClient: Redis{}.DefaultPort()}
}

func (Redis) ClientNodes(dbms.Topology) ([]int, string) {
	return []int{0}, "the client writes to and reads from the primary (n1) only; the replicas receive every write asynchronously (replicaof) and serve no client reads"
}

func (Redis) Node(t dbms.Topology, i int, peers []dbms.Peer) dbms.DBMS {
	if i == 0 {
		return Redis{}
	}
	return redisReplica{primary: peers[0]}
}

// redisReplica is a replica of primary: the same configuration with replicaof, and the run's
// password as masterauth.
type redisReplica struct {
	Redis
	primary dbms.Peer
}

func (r redisReplica) ConfigFiles(s dbms.Settings) map[string][]byte {
	files := r.Redis.ConfigFiles(s)
	conf := string(files["redis.conf"]) + "replicaof " + r.primary.Host + " " + strconv.Itoa(r.primary.Port(dbms.PortClient)) + "\nreplica-read-only yes\n"
	if s.Password != "" {
		conf += "masterauth " + s.Password + "\n"
	}
	files["redis.conf"] = []byte(conf)
	return files
}

// ClusterReady: the primary's INFO replication lists every replica online, and every replica
// reports its link to the primary up with no sync in progress.
func (Redis) ClusterReady(ctx context.Context, t dbms.Topology, eps []driver.Endpoint, c driver.Credentials) (map[string]string, error) {
	info := func(ep driver.Endpoint) (map[string]string, error) {
		cl := goredis.NewClient(&goredis.Options{Addr: ep.String(), Password: c.Password, MaxRetries: -1})
		defer cl.Close()
		s, err := cl.Info(ctx, "replication").Result()
		if err != nil {
			return nil, err
		}
		return parseInfo(s), nil
	}
	pri, err := info(eps[0])
	if err != nil {
		return nil, fmt.Errorf("primary n1: INFO replication: %w", err)
	}
	if pri["role"] != "master" {
		return nil, fmt.Errorf("n1 is not a primary (role %s)", pri["role"])
	}
	online := 0
	for k, v := range pri {
		if strings.HasPrefix(k, "slave") && k != "slave_read_repl_offset" && strings.Contains(v, "state=online") {
			online++
		}
	}
	if online != t.Nodes-1 {
		return nil, fmt.Errorf("the primary has %d replicas online, not %d (connected_slaves %s)", online, t.Nodes-1, pri["connected_slaves"])
	}
	for i, ep := range eps[1:] {
		rep, err := info(ep)
		if err != nil {
			return nil, fmt.Errorf("replica n%d: INFO replication: %w", i+2, err)
		}
		if rep["master_link_status"] != "up" || rep["master_sync_in_progress"] != "0" {
			return nil, fmt.Errorf("replica n%d: link %s, sync in progress %s", i+2, rep["master_link_status"], rep["master_sync_in_progress"])
		}
	}
	return map[string]string{"cluster_primary": "n1", "cluster_replicas_online": strconv.Itoa(online),
		"cluster_replication": "asynchronous (replicaof)"}, nil
}

// parseInfo reads the "key:value" lines of an INFO reply.
func parseInfo(s string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}
