// Package etcd describes Debian's etcd 3.4 to every platform (package dbms): one member
// (etcd.go) and a cluster of members (cluster.go).
package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/driver"
)

// Etcd is Debian's etcd-server 3.4, one member. Every write is a raft entry fsynced to the
// write-ahead log before it is acknowledged, which makes it a direct probe of a box's storage
// path (and the store every Kubernetes control plane runs on).
//
// Its configuration is the start script boxbench writes into the data directory
// (etcdScript): etcd ignores every command-line flag once it is given a configuration file,
// and the file would have to name the data directory, which differs between platforms; so the
// owned settings are the script's fixed flag list, hashed like any other config file. The
// script changes into the run directory first, because the member's peer listener (which a
// single member still opens) is a unix socket named relative to it: no TCP port to collide
// with another box on the host network.
type Etcd struct{}

// EtcdUser is the etcd user boxbench's clients authenticate as when the run has a password.
const EtcdUser = "root"

const (
	etcdBin    = "/usr/bin/etcd"
	etcdScript = "boxbench-etcd.sh"
	// etcdAuthFile keeps, in the data directory (0600, the server's user only), the root
	// password the data was last started with: a restored seed has auth enabled with the
	// seed's password, and etcd can change a password only for a client that knows the
	// current one. Redis keeps its password beside its data the same way (redis.conf).
	etcdAuthFile = "boxbench-etcd-auth"
	// EtcdSocket is the client unix socket, in the run directory.
	EtcdSocket = "etcd.sock"
)

func (Etcd) Name() string               { return "etcd" }
func (Etcd) Packages() []string         { return []string{"etcd-server", "etcd-client"} }
func (Etcd) ServerPackage() string      { return "etcd-server" }
func (Etcd) User() string               { return "etcd" }
func (Etcd) DefaultPort() int           { return 2379 }
func (Etcd) StopSignal() syscall.Signal { return syscall.SIGTERM } // graceful: stops raft, closes the backend
func (Etcd) VersionCommand() []string   { return []string{etcdBin, "--version"} }

// Traits: a cluster of members; the start command is a script of boxbench's that runs etcdBin.
// Its unix listener is named host:port.
func (e Etcd) Traits() dbms.Traits {
	return dbms.Traits{Clustered: e, ServerBinary: etcdBin, Socket: EtcdSocket + ":0"}
}

// Client: with a password, the client authenticates as root (etcd's auth needs root to exist
// before it can be enabled, and boxbench's client needs every permission anyway).
func (Etcd) Client() driver.Credentials { return driver.Credentials{User: EtcdUser} }

// InitCommands: etcd creates its member directory at first start.
func (Etcd) InitCommands(dbms.Layout) []dbms.Step { return nil }

// EtcdSizes are the memory-dependent settings for a memory limit (0 = unlimited).
//
//   - QuotaBytes (--quota-backend-bytes): the backend may grow to this before etcd raises its
//     NOSPACE alarm and refuses writes. A disk-bound data set is four times the memory limit in
//     raw bytes; etcd stores each field as its own key with its revision and metadata in a
//     B+tree whose pages are part-filled, about three times the raw size, and updates add
//     revisions until the next compaction: 16 × the limit, at least etcd's default of 2 GiB.
//     Unlimited: 8 GiB, etcd's documented largest.
//   - SnapshotCount (--snapshot-count): raft entries are kept in memory until a snapshot (plus
//     5000 for slow followers); at up to ~1.5 KiB an entry (a 10-field insert), an eighth of
//     the limit, between 1000 and etcd's default of 100000.
//   - GoMemLimit (GOMEMLIMIT): the Go runtime's soft limit, three quarters of the limit, so the
//     garbage collector works harder before the cgroup's limit is reached (etcd holds no buffer
//     pool of its own: its B+tree is a memory-mapped file, in the page cache).
type EtcdSizes struct {
	QuotaBytes    int64
	SnapshotCount int64
	GoMemLimit    int64 // 0: not set
}

// EtcdSizing returns the settings for a memory limit.
func EtcdSizing(memoryBytes int64) EtcdSizes {
	if memoryBytes <= 0 {
		return EtcdSizes{QuotaBytes: 8 << 30, SnapshotCount: 100000}
	}
	return EtcdSizes{QuotaBytes: max(2<<30, 16*memoryBytes),
		SnapshotCount: min(100000, max(1000, memoryBytes/8/1536)), GoMemLimit: memoryBytes * 3 / 4}
}

// ConfigFiles returns the start script (the owned configuration) and, with a password, the
// credential file the script applies before the server listens on the network.
//
// Compaction keeps the last 5 minutes of revisions (periodic), as Kubernetes' API server asks
// for; a single transaction may hold 1024 operations, so a load batch of 64 ten-field records
// is one transaction.
func (Etcd) ConfigFiles(s dbms.Settings) map[string][]byte {
	return etcdFiles(s, `--name boxbench --data-dir "$d" \
  --listen-peer-urls unix://boxbench-peer:0 --initial-advertise-peer-urls unix://boxbench-peer:0 \
  --initial-cluster boxbench=unix://boxbench-peer:0 --initial-cluster-state new`)
}

// etcdFiles renders the start script with member, the flags that say who the member is and
// where its peers are (one member: a unix peer socket; a cluster's node: etcdNode).
func etcdFiles(s dbms.Settings, member string) map[string][]byte {
	z := EtcdSizing(s.MemoryBytes)
	env := ""
	if z.GoMemLimit > 0 {
		env = "export GOMEMLIMIT=" + strconv.FormatInt(z.GoMemLimit, 10) + "\n"
	}
	flags := member + fmt.Sprintf(` \
  --quota-backend-bytes %d --snapshot-count %d \
  --auto-compaction-mode periodic --auto-compaction-retention 5m \
  --max-txn-ops 1024 --max-request-bytes 1572864 \
  --logger zap --log-outputs stderr --log-level warn`, z.QuotaBytes, z.SnapshotCount)
	auth, cred := `"$d/`+etcdAuthFile+`"`, `"$d/`+dbms.CredentialFile+`"`
	script := `# written by boxbench: etcd's configuration (its flags), identical on every platform
# usage: sh boxbench-etcd.sh DATADIR RUNDIR CLIENT-URLS ADVERTISE-URLS [setpassword|waitauth]
set -u
d=$1; run=$2; urls=$3; adv=$4
umask 077
cd "$run" || exit 1
rm -f boxbench-peer:0 boxbench-setup.sock:0 ` + EtcdSocket + `:0
` + env + `if [ "${5:-}" = setpassword ]; then
  # The password goes in while etcd listens only on a unix socket of its own in the run
  # directory; etcdctl reads it from a file on its standard input or from its environment,
  # never from an argv.
  /usr/bin/etcd ` + flags + ` --listen-client-urls unix://boxbench-setup.sock:0 --advertise-client-urls unix://boxbench-setup.sock:0 &
  pid=$!
  export ETCDCTL_API=3 ETCDCTL_ENDPOINTS=unix://boxbench-setup.sock:0 ETCDCTL_DIAL_TIMEOUT=5s ETCDCTL_COMMAND_TIMEOUT=60s
  fail() { echo "boxbench: setting etcd's root password failed: $1" >&2; kill -TERM $pid; wait $pid; exit 1; }
  if [ -f ` + auth + ` ]; then export ETCDCTL_USER=root; ETCDCTL_PASSWORD=$(cat ` + auth + `); export ETCDCTL_PASSWORD; fi
  i=0
  until /usr/bin/etcdctl endpoint health >/dev/null 2>&1; do
    i=$((i+1)); [ $i -gt 600 ] && fail "etcd did not answer on its setup socket"
    kill -0 $pid 2>/dev/null || fail "etcd exited"
    sleep 0.2
  done
  if [ -f ` + auth + ` ]; then
    /usr/bin/etcdctl user passwd root --interactive=false <` + cred + ` >/dev/null || fail "user passwd"
  else
    /usr/bin/etcdctl user add root --interactive=false <` + cred + ` >/dev/null || fail "user add"
    /usr/bin/etcdctl auth enable >/dev/null || fail "auth enable"
  fi
  mv -f ` + cred + ` ` + auth + ` || fail "keep the password"
  kill -TERM $pid; wait $pid
  unset ETCDCTL_USER ETCDCTL_PASSWORD
  rm -f boxbench-peer:0 boxbench-setup.sock:0
elif [ "${5:-}" = waitauth ]; then
  # A cluster's other member: it serves clients on the network only once it has applied the
  # first member's "auth enable" (replicated through raft), so no client ever reaches it
  # without authentication. Until then it listens for clients on a unix socket of its own.
  /usr/bin/etcd ` + flags + ` --listen-client-urls unix://boxbench-setup.sock:0 --advertise-client-urls unix://boxbench-setup.sock:0 &
  pid=$!
  export ETCDCTL_API=3 ETCDCTL_ENDPOINTS=unix://boxbench-setup.sock:0 ETCDCTL_DIAL_TIMEOUT=5s ETCDCTL_COMMAND_TIMEOUT=10s
  i=0
  until /usr/bin/etcdctl get boxbench-auth-probe 2>&1 | grep -q 'user name is empty'; do
    i=$((i+1))
    if [ $i -gt 600 ]; then echo "boxbench: the cluster did not turn authentication on" >&2; kill -TERM $pid; wait $pid; exit 1; fi
    kill -0 $pid 2>/dev/null || { echo "boxbench: etcd exited before authentication was on" >&2; exit 1; }
    sleep 0.2
  done
  kill -TERM $pid; wait $pid
  rm -f boxbench-setup.sock:0
fi
exec /usr/bin/etcd ` + flags + ` --listen-client-urls "$urls" --advertise-client-urls "$adv"
`
	files := map[string][]byte{etcdScript: []byte(script)}
	if s.Password != "" {
		files[dbms.CredentialFile] = []byte(s.Password + "\n")
	}
	return files
}

// StartCommand runs the script (see Etcd): the server listens on Listen:Port and on a unix
// socket in the run directory.
func (Etcd) StartCommand(l dbms.Layout) []string {
	adv := l.Listen
	if adv == "0.0.0.0" {
		adv = "127.0.0.1" // one member: the advertised address is only informational
	}
	urls := "http://" + l.Listen + ":" + strconv.Itoa(l.Port) + ",unix://" + EtcdSocket + ":0"
	argv := []string{"/bin/sh", l.DataDir + "/" + etcdScript, l.DataDir, l.RunDir, urls,
		"http://" + adv + ":" + strconv.Itoa(l.Port)}
	if l.SetPassword {
		argv = append(argv, "setpassword")
	}
	return argv
}

// EtcdConfig is the official client's configuration for ep and c: one endpoint, no member
// list synchronisation, no client log.
func EtcdConfig(ep driver.Endpoint, c driver.Credentials) clientv3.Config {
	target := "http://" + ep.String()
	if ep.Unix != "" {
		target = "unix://" + ep.Unix
	}
	targets := []string{target}
	if len(ep.Members) > 0 {
		// A cluster: the client knows every member and balances over them (round robin).
		targets = nil
		for _, m := range ep.Members {
			targets = append(targets, "http://"+m.String())
		}
	}
	cfg := clientv3.Config{Endpoints: targets, DialTimeout: 5 * time.Second,
		Logger: zap.NewNop(), RejectOldCluster: false}
	if c.Password != "" {
		cfg.Username, cfg.Password = c.User, c.Password
		if cfg.Username == "" {
			cfg.Username = EtcdUser
		}
	}
	return cfg
}

// Ready reads a key (a linearizable read: it goes through raft, so the member has a leader and
// has applied its log).
func (Etcd) Ready(ctx context.Context, ep driver.Endpoint, c driver.Credentials) error {
	cfg := EtcdConfig(ep, c)
	cfg.Context = ctx
	cli, err := clientv3.New(cfg)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Get(ctx, "boxbench-ready")
	if err != nil && strings.Contains(err.Error(), "context deadline exceeded") && ctx.Err() == nil {
		return errors.New("etcd does not answer yet")
	}
	return err
}
