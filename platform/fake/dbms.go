package fake

import (
	"context"
	"syscall"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// DBName is the fake database's name: a spec names it as dbms, a test adds it as one row of
// the table of databases (builtin.With) with Open as its driver.
const DBName = "fake"

// DBMS is the fake database: a fake platform's box serves it in memory (no package, no
// command, no file). It can be a cluster of boxes (every node its own store; the client uses
// the first), so that topologies run through the fake platform too.
type DBMS struct{}

var _ dbms.DBMS = DBMS{}

func (DBMS) Name() string                                { return DBName }
func (DBMS) Packages() []string                          { return nil }
func (DBMS) ServerPackage() string                       { return "" }
func (DBMS) User() string                                { return "" }
func (DBMS) DefaultPort() int                            { return 0 }
func (DBMS) InitCommands(dbms.Layout) []dbms.Step        { return nil }
func (DBMS) ConfigFiles(dbms.Settings) map[string][]byte { return map[string][]byte{} }
func (DBMS) StartCommand(dbms.Layout) []string           { return []string{"fake"} }
func (DBMS) VersionCommand() []string                    { return nil }
func (DBMS) StopSignal() syscall.Signal                  { return syscall.SIGTERM }
func (DBMS) Client() driver.Credentials                  { return driver.Credentials{User: "fake"} }

// Ready answers once the store at ep answers a ping with c's password.
func (DBMS) Ready(ctx context.Context, ep driver.Endpoint, c driver.Credentials) error {
	return call(ctx, ep, c.Password, Args{Op: "ping"})
}

func (DBMS) Traits() dbms.Traits {
	return dbms.Traits{Clustered: cluster{}, NoSocket: "the fake database listens on a loopback port only"}
}

// cluster is the fake database's cluster side: any number of nodes, each a store of its own,
// every node ready when it answers; the client uses the first.
type cluster struct{}

func (cluster) CheckTopology(dbms.Topology) []string           { return nil }
func (cluster) ClusterPorts() map[string]int                   { return map[string]int{dbms.PortClient: 0} }
func (cluster) Node(dbms.Topology, int, []dbms.Peer) dbms.DBMS { return DBMS{} }
func (cluster) ClusterReady(ctx context.Context, _ dbms.Topology, eps []driver.Endpoint, c driver.Credentials) (map[string]string, error) {
	for _, ep := range eps {
		if err := call(ctx, ep, c.Password, Args{Op: "ping"}); err != nil {
			return nil, err
		}
	}
	return map[string]string{"fake_cluster": "every node answered"}, nil
}
func (cluster) ClientNodes(t dbms.Topology) ([]int, string) {
	return []int{0}, "reads and writes go to the first node"
}
