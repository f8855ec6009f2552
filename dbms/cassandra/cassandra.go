// Package cassandra describes Apache Cassandra to every platform (package dbms): one node
// (cassandra.go), its counters through boxbench's observer in the JVM (observer.go) and a
// ring of nodes (ring.go).
package cassandra

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// Cassandra is Apache Cassandra 5.0, one node, on Debian's Java 17 runtime.
//
// Debian has no Cassandra: `make setup` resolves cassandra-all and its runtime dependencies
// from Maven Central (scripts/cassandra.sh: pinned, checksummed) into CassandraHome/lib, and
// compiles boxbench's launcher (scripts/cassandra/BoxbenchCassandra.java) into
// CassandraHome/launcher. Those files are the BuiltFiles: they run natively from that path and
// are copied to the same path into every image (the tree's recipe holds their sha256), so
// native and boxes run the same jars; the JRE is the Debian package whose version the
// platforms compare.
//
// Authentication: CQL has no unix socket, so the password cannot go in before the network
// port opens the way the other databases do it. The launcher starts the node with its native
// transport closed, writes the run's role (a superuser with a bcrypt hash of the run's
// password, as Cassandra's own default-role setup does) straight into system_auth through the
// node's internal query path, deletes the default cassandra role if the data holds it, and only
// then opens the CQL port. The default cassandra/cassandra superuser is never created (its
// setup is delayed by a day, and finds a role when it runs), so no client ever sees it, in a
// fresh data directory or in a restored seed. Only the internode (storage) port is open during
// the setup; it carries no CQL and no roles.
//
// The node runs as the system account "daemon": no Debian package creates a cassandra user,
// and daemon exists with the same uid natively and in every Debian tree.
type Cassandra struct{}

const (
	// CassandraVersion is the release scripts/cassandra.sh resolves (its default).
	CassandraVersion = "5.0.5"
	// CassandraHome holds lib/ (the jars) and launcher/ (boxbench's launcher class).
	CassandraHome = "/var/cache/boxbench/cassandra/" + CassandraVersion
	// CassandraUser is the role boxbench's clients authenticate as.
	CassandraUser = "boxbench"
	// CassandraKeyspace is YCSB's keyspace.
	CassandraKeyspace = "ycsb"

	cassandraJava     = "/usr/bin/java"
	cassandraLauncher = CassandraHome + "/launcher/BoxbenchCassandra.class"
	cassandraScript   = "boxbench-cassandra.sh"
	cassandraYAML     = "cassandra.yaml"
	cassandraLogback  = "logback.xml"
	// cassandraNumTokens: virtual nodes per node (Cassandra 5.0's default).
	cassandraNumTokens = 16
)

func (Cassandra) Name() string               { return "cassandra" }
func (Cassandra) Packages() []string         { return []string{"openjdk-17-jre-headless"} }
func (Cassandra) ServerPackage() string      { return "openjdk-17-jre-headless" }
func (Cassandra) User() string               { return "daemon" }
func (Cassandra) DefaultPort() int           { return 9042 }
func (Cassandra) StopSignal() syscall.Signal { return syscall.SIGTERM } // its shutdown hook drains: memtables flushed

// Traits: its own counters through the observer in its JVM and the rules on them (rules.go),
// a ring, a JVM started by a launcher script, jars built by `make setup`.
func (c Cassandra) Traits() dbms.Traits {
	return dbms.Traits{Observer: c, WindowRules: windowRules, Clustered: c, ServerBinary: cassandraJava, BuiltFiles: c.builtFiles(),
		NoSocket: "CQL is TCP only", ReadyTimeout: cassandraReadyTimeout}
}

// cassandraReadyTimeout bounds a single server's wait for its CQL port, longer than the
// platforms' default: its JVM starts in 20–30 s on an idle 2-vCPU host, but under a 1-cpu quota
// beside a cold CI run's builds (load 20) it opened its port after 3 minutes and a few seconds
// (2026-11-28). A bound against a hang; a server that exits is seen at once.
const cassandraReadyTimeout = 6 * time.Minute

// VersionCommand prints "Cassandra 5.0.5 on openjdk version "17.0.x" …".
func (Cassandra) VersionCommand() []string {
	return []string{"/bin/sh", "-c", `echo "Cassandra $(` + cassandraJava + ` -cp '` + CassandraHome +
		`/lib/*' org.apache.cassandra.tools.GetVersion) on $(` + cassandraJava + ` -version 2>&1 | head -n 1)"`}
}

// BuiltFiles are the jars scripts/cassandra.sh cached (as its SHA256SUMS lists them), the
// launcher and the observer (observer.go). Before `make setup` has run, the two files boxbench needs by name, so Missing says
// they are not built.
func (Cassandra) builtFiles() []string {
	files := []string{cassandraLauncher, cassandraObserverJar}
	f, err := os.Open(CassandraHome + "/SHA256SUMS")
	if err != nil {
		return append(files, CassandraHome+"/lib/cassandra-all-"+CassandraVersion+".jar")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "<sha256>  <name>.jar"; a name with a slash or a dot-dot is not one the script wrote.
		fs := strings.Fields(sc.Text())
		if len(fs) == 2 && strings.HasSuffix(fs[1], ".jar") && filepath.Base(fs[1]) == fs[1] && !strings.HasPrefix(fs[1], ".") {
			files = append(files, CassandraHome+"/lib/"+fs[1])
		}
	}
	return files
}

// Client: the run's role, in YCSB's keyspace.
func (Cassandra) Client() driver.Credentials {
	return driver.Credentials{User: CassandraUser, Database: CassandraKeyspace}
}

// InitCommands: Cassandra creates its directories (data, commitlog, hints, saved_caches under
// the data directory) at first start.
func (Cassandra) InitCommands(dbms.Layout) []dbms.Step { return nil }

// CassandraSizes are the memory-dependent settings for a memory limit (0 = unlimited).
//
//   - HeapBytes (-Xms = -Xmx): cassandra-env.sh's rule applied to the limit, never to host
//     RAM: max(min(½, 1 GiB), min(¼, 8 GiB)); unlimited: 1 GiB.
//   - MemtableBytes (memtable_heap_space): a quarter of the heap, Cassandra's default; the
//     memtables live on the heap (heap_buffers), so the limit bounds them.
//   - DirectBytes (-XX:MaxDirectMemorySize): netty's buffers and the chunk cache, an eighth of
//     the limit (at least 64 MiB); the JVM's default would be the heap size again.
//   - FileCacheBytes (file_cache_size, the chunk cache of decompressed sstable chunks): half
//     of DirectBytes; the page cache holds the rest of the data, as for the other databases.
type CassandraSizes struct {
	HeapBytes      int64
	MemtableBytes  int64
	DirectBytes    int64
	FileCacheBytes int64
}

// CassandraSizing returns the settings for a memory limit.
func CassandraSizing(memoryBytes int64) CassandraSizes {
	heap := int64(1 << 30)
	direct := int64(256 << 20)
	if memoryBytes > 0 {
		heap = max(min(memoryBytes/2, 1<<30), min(memoryBytes/4, 8<<30))
		direct = max(64<<20, memoryBytes/8)
	}
	heap = heap &^ (1<<20 - 1) // whole MiB: the yaml and -Xmx take MiB
	direct = direct &^ (1<<20 - 1)
	return CassandraSizes{HeapBytes: heap, MemtableBytes: heap / 4 &^ (1<<20 - 1), DirectBytes: direct,
		FileCacheBytes: direct / 2 &^ (1<<20 - 1)}
}

// CassandraNode is one node's configuration. Address and ports may be the start script's
// placeholders (a single node is configured before its box's address is known); a ring lists
// its seeds.
type CassandraNode struct {
	Cluster     string
	Seeds       []string // host:storage-port (or host: this node's storage port) of the seeds
	Listen      string   // listen_address: the internode (storage) address
	StoragePort string   // "" = the launcher picks a free one (-Dcassandra.storage_port=0)
	RPC         string   // rpc_address: where CQL listens
	Broadcast   string   // broadcast_rpc_address ("" = rpc_address)
	NativePort  string
	Auth        bool // PasswordAuthenticator (else AllowAllAuthenticator)
	Sizes       CassandraSizes
	// Tokens are the node's num_tokens tokens, given up front (a fresh ring: initial_token,
	// and no bootstrap, since there is no data to stream); nil = Cassandra picks them.
	Tokens []string
}

// CassandraConfig renders a node's cassandra.yaml: the one place the server's settings are
// written, for one node or for each node of a ring.
func CassandraConfig(n CassandraNode) []byte {
	auth := "AllowAllAuthenticator"
	if n.Auth {
		auth = "PasswordAuthenticator"
	}
	bcast := ""
	if n.Broadcast != "" {
		bcast = "broadcast_rpc_address: " + n.Broadcast + "\n"
	}
	storage := ""
	if n.StoragePort != "" {
		storage = "storage_port: " + n.StoragePort + "\n"
	}
	tokens := ""
	if len(n.Tokens) > 0 {
		tokens = "initial_token: " + strings.Join(n.Tokens, ",") + "\nauto_bootstrap: false\n"
	}
	mib := func(b int64) string { return strconv.FormatInt(b>>20, 10) + "MiB" }
	return []byte(`# written by boxbench: Cassandra's configuration, identical on every platform
cluster_name: ` + n.Cluster + `
num_tokens: ` + strconv.Itoa(cassandraNumTokens) + `
` + tokens + `partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "` + strings.Join(n.Seeds, ",") + `"
listen_address: ` + n.Listen + `
` + storage + `rpc_address: ` + n.RPC + `
` + bcast + `native_transport_port: ` + n.NativePort + `
start_native_transport: false
authenticator: ` + auth + `
authorizer: AllowAllAuthorizer
role_manager: CassandraRoleManager
commitlog_sync: periodic
commitlog_sync_period: 10000ms
memtable_allocation_type: heap_buffers
memtable_heap_space: ` + mib(n.Sizes.MemtableBytes) + `
memtable_offheap_space: ` + mib(n.Sizes.MemtableBytes) + `
file_cache_size: ` + mib(n.Sizes.FileCacheBytes) + `
auto_snapshot: false
disk_failure_policy: stop
commit_failure_policy: stop
`)
}

// cassandraJVMOptions are the module exports and opens of Cassandra's conf/jvm17-server.options
// (its code reaches into JDK internals) and the heap, GC and direct-memory settings.
func cassandraJVMOptions(z CassandraSizes) string {
	opts := []string{"-Xms" + strconv.FormatInt(z.HeapBytes>>20, 10) + "m",
		"-Xmx" + strconv.FormatInt(z.HeapBytes>>20, 10) + "m",
		"-XX:MaxDirectMemorySize=" + strconv.FormatInt(z.DirectBytes>>20, 10) + "m",
		"-XX:+UseG1GC", "-XX:MaxGCPauseMillis=300", "-Xss256k", "-XX:+ExitOnOutOfMemoryError",
		"-XX:+PerfDisableSharedMem", "-Djava.net.preferIPv4Stack=true", "-Djdk.attach.allowAttachSelf=true"}
	for _, e := range []string{"java.base/jdk.internal.misc", "java.base/jdk.internal.ref", "java.base/sun.nio.ch",
		"java.management.rmi/com.sun.jmx.remote.internal.rmi", "java.rmi/sun.rmi.registry",
		"java.rmi/sun.rmi.server", "java.sql/java.sql", "java.base/java.lang.ref", "jdk.unsupported/sun.misc"} {
		opts = append(opts, "--add-exports", e+"=ALL-UNNAMED")
	}
	for _, o := range []string{"java.base/java.lang.module", "java.base/jdk.internal.loader",
		"java.base/jdk.internal.ref", "java.base/jdk.internal.reflect", "java.base/jdk.internal.math",
		"java.base/jdk.internal.module", "java.base/jdk.internal.util.jar",
		"jdk.management/com.sun.management.internal", "java.base/sun.nio.ch", "java.base/java.io",
		"java.base/java.nio", "java.base/java.util.concurrent", "java.base/java.util",
		"java.base/java.util.concurrent.atomic", "java.base/java.lang", "java.base/java.math",
		"java.base/java.lang.reflect", "java.base/java.net"} {
		opts = append(opts, "--add-opens", o+"=ALL-UNNAMED")
	}
	return strings.Join(opts, " \\\n  ")
}

// ConfigFiles returns the node's yaml (address and ports as placeholders the start script
// fills in), the logging configuration (warnings and errors to standard error), the start
// script with the JVM's settings, and, with a password, the credential file the launcher reads
// and deletes before the CQL port opens.
func (Cassandra) ConfigFiles(s dbms.Settings) map[string][]byte {
	z := CassandraSizing(s.MemoryBytes)
	yaml := CassandraConfig(CassandraNode{Cluster: "boxbench", Seeds: []string{"@LISTEN@"},
		Listen: "@LISTEN@", RPC: "@RPC@", Broadcast: "@BROADCAST@",
		NativePort: "@PORT@", Auth: s.Password != "", Sizes: z})
	files := map[string][]byte{cassandraYAML: yaml, cassandraLogback: cassandraLogbackXML,
		cassandraScript: cassandraStartScript(z, `-Dcassandra.storage_port=0 -Dboxbench.listen_address="$listen"`)}
	if s.Password != "" {
		files[dbms.CredentialFile] = []byte(CassandraUser + " " + s.Password + "\n")
	}
	return files
}

// cassandraLogbackXML sends warnings and errors to standard error.
var cassandraLogbackXML = []byte(`<configuration>
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%-5level %date{ISO8601} %logger{0} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR"/></root>
</configuration>
`)

// cassandraStartScript is the start script with the JVM's settings for sizes z; props are
// further -D options (the storage port: a single node's is picked by the launcher).
func cassandraStartScript(z CassandraSizes, props string) []byte {
	return []byte(`# written by boxbench: Cassandra's start (its JVM settings), identical on every platform
# usage: sh boxbench-cassandra.sh DATADIR RUNDIR LISTEN-ADDR PORT [setpassword]
set -u
d=$1; run=$2; addr=$3; port=$4
umask 077
for v in "$addr" "$port"; do
  case $v in ''|*[!0-9a-f.:]*) echo "boxbench: bad address or port: $v" >&2; exit 2 ;; esac
done
# Cassandra's internode address cannot be a wildcard: a single node gossips with itself on
# loopback; CQL listens on the wildcard and names loopback as its address.
listen=$addr; bcast=
if [ "$addr" = 0.0.0.0 ]; then listen=127.0.0.1; bcast=127.0.0.1; fi
sed -e "s/@LISTEN@/$listen/g" -e "s/@RPC@/$addr/g" -e "s/@PORT@/$port/g" \
  -e "s/@BROADCAST@/$bcast/g" -e '/^broadcast_rpc_address: $/d' "$d/` + cassandraYAML + `" >"$run/` + cassandraYAML + `" || exit 1
cred=
if [ "${5:-}" = setpassword ]; then cred=$d/` + dbms.CredentialFile + `; fi
exec ` + cassandraJava + ` ` + cassandraJVMOptions(z) + ` \
  -javaagent:` + cassandraObserverJar + `="$d/` + cassandraStatsFile + `" \
  -Dlogback.configurationFile="$d/` + cassandraLogback + `" -Dcassandra.config="file://$run/` + cassandraYAML + `" \
  -Dcassandra.storagedir="$d" -Dcassandra.logdir="$run" -Dcassandra.triggers_dir="$run" -Djava.io.tmpdir="$run" \
  -Dcassandra-foreground=yes -Dcassandra.start_native_transport=false \
  ` + props + ` \
  -Dcassandra.skip_wait_for_gossip_to_settle=0 -Dcassandra.superuser_setup_delay_ms=86400000 \
  -cp '` + CassandraHome + `/lib/*:` + filepath.Dir(cassandraLauncher) + `' BoxbenchCassandra $cred
`)
}

// StartCommand runs the script (see Cassandra): CQL on Listen:Port, internode on a free port
// the launcher picks.
func (Cassandra) StartCommand(l dbms.Layout) []string {
	argv := []string{"/bin/sh", l.DataDir + "/" + cassandraScript, l.DataDir, l.RunDir, l.Listen,
		strconv.Itoa(l.Port)}
	if l.SetPassword {
		argv = append(argv, "setpassword")
	}
	return argv
}

// CQLCluster is the gocql configuration for ep and c: the one host given (a ring's nodes:
// ep.Members, each at its own port), no discovery of others (a node in a box may name an
// address the client cannot reach), protocol v4, no write coalescing, the run's role when
// there is a password.
func CQLCluster(ep driver.Endpoint, c driver.Credentials) *gocql.ClusterConfig {
	cl := gocql.NewCluster(ep.Host)
	if len(ep.Members) > 0 {
		hosts := make([]string, len(ep.Members))
		for i, m := range ep.Members {
			hosts[i] = net.JoinHostPort(m.Host, strconv.Itoa(m.Port))
		}
		cl = gocql.NewCluster(hosts...)
	}
	cl.Port = ep.Port
	cl.ProtoVersion = 4
	cl.DisableInitialHostLookup = true
	cl.Events.DisableNodeStatusEvents, cl.Events.DisableTopologyEvents, cl.Events.DisableSchemaEvents = true, true, true
	cl.ConnectTimeout, cl.Timeout = 5*time.Second, 10*time.Second
	cl.ReconnectInterval = 0 // the generator ends a run on errors; no background reconnection
	cl.Consistency = gocql.One
	// gocql's default write coalescing holds each frame up to 200 µs for company (a timer): at
	// a generator's concurrency it tripled a read's round trip here (1.5 vs 4.7 ms on a loaded
	// 2-vCPU host) and added 6 allocations per operation.
	cl.WriteCoalesceWaitTime = 0
	if c.Password != "" {
		user := c.User
		if user == "" {
			user = CassandraUser
		}
		cl.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: c.Password}
	}
	return cl
}

// CQLSession opens a gocql session on CQLCluster(ep, c) whose connection startup (the
// handshake and the password's bcrypt check) and queries may take until ctx's deadline rather
// than CQLCluster's 5 and 10 s: a JVM on a loaded host, or on an emulated CPU, can take longer
// than that to answer a new connection while it is otherwise healthy. Without a deadline the
// session keeps CQLCluster's timeouts. The caller closes the session.
func CQLSession(ctx context.Context, ep driver.Endpoint, c driver.Credentials) (*gocql.Session, error) {
	cl := CQLCluster(ep, c)
	if dl, ok := ctx.Deadline(); ok {
		cl.ConnectTimeout = max(time.Until(dl), time.Millisecond)
		cl.Timeout = cl.ConnectTimeout
	}
	return cl.CreateSession()
}

// Ready reads the node's release version over CQL with the client's credentials: the native
// transport is open, so the launcher has set the role.
func (Cassandra) Ready(ctx context.Context, ep driver.Endpoint, c driver.Credentials) error {
	if ep.Unix != "" {
		return fmt.Errorf("cassandra has no unix socket")
	}
	// The caller's deadline is the probe's time: short natively, long on an emulated CPU,
	// where the connection's bcrypt check alone takes seconds.
	s, err := CQLSession(ctx, ep, c)
	if err != nil {
		return fmt.Errorf("cassandra: %w", err)
	}
	defer s.Close()
	var v string
	if err := s.Query("SELECT release_version FROM system.local").ScanContext(ctx, &v); err != nil {
		return fmt.Errorf("cassandra: %w", err)
	}
	return nil
}
