package cassandra

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/dbms"
)

// TestCassandraSizing: cassandra-env.sh's heap rule on the box's limit, memtables a quarter of
// the heap, direct memory an eighth of the limit.
func TestCassandraSizing(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	for _, tc := range []struct {
		limit                         int64
		heap, memtable, direct, cache int64
	}{
		{0, 1 * gib, 256 * mib, 256 * mib, 128 * mib},
		{512 * mib, 256 * mib, 64 * mib, 64 * mib, 32 * mib},
		{1 * gib, 512 * mib, 128 * mib, 128 * mib, 64 * mib},
		{4 * gib, 1 * gib, 256 * mib, 512 * mib, 256 * mib},
		{16 * gib, 4 * gib, 1 * gib, 2 * gib, 1 * gib},
		{64 * gib, 8 * gib, 2 * gib, 8 * gib, 4 * gib},
	} {
		z := CassandraSizing(tc.limit)
		if z.HeapBytes != tc.heap || z.MemtableBytes != tc.memtable || z.DirectBytes != tc.direct || z.FileCacheBytes != tc.cache {
			t.Errorf("limit %d MiB: %+v, want heap %d memtable %d direct %d cache %d MiB", tc.limit/mib, z,
				tc.heap/mib, tc.memtable/mib, tc.direct/mib, tc.cache/mib)
		}
	}
}

// TestCassandraConfigSeeds: the one rendering function takes a node's seeds and addresses (a
// ring renders each node with it).
func TestCassandraConfigSeeds(t *testing.T) {
	y := string(CassandraConfig(CassandraNode{Cluster: "ring", Seeds: []string{"10.0.0.1:7000", "10.0.0.2:7000"},
		Listen: "10.0.0.3", StoragePort: "7000", RPC: "10.0.0.3", NativePort: "9042", Auth: true,
		Sizes: CassandraSizing(1 << 30)}))
	for _, want := range []string{`seeds: "10.0.0.1:7000,10.0.0.2:7000"`, "listen_address: 10.0.0.3\n",
		"native_transport_port: 9042\n", "storage_port: 7000\n", "authenticator: PasswordAuthenticator\n", "memtable_heap_space: 128MiB\n",
		"start_native_transport: false\n"} {
		if !strings.Contains(y, want) {
			t.Errorf("yaml lacks %q:\n%s", want, y)
		}
	}
	if strings.Contains(y, "broadcast_rpc_address") {
		t.Errorf("a node with its own address got a broadcast_rpc_address:\n%s", y)
	}
	if y := string(Cassandra{}.ConfigFiles(dbms.Settings{})[cassandraYAML]); !strings.Contains(y, "AllowAllAuthenticator") {
		t.Errorf("without a password the node should not ask for one:\n%s", y)
	}
}

// TestCassandraScriptRendersYAML runs the start script's yaml step with sh: the placeholders
// become the box's address and ports, the wildcard keeps gossip on loopback, and an address
// with shell or sed syntax is refused before anything is written.
func TestCassandraScriptRendersYAML(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	files := Cassandra{}.ConfigFiles(dbms.Settings{MemoryBytes: 1 << 30})
	d, run := t.TempDir(), t.TempDir()
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(d, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Only the part before the JVM: cut at exec.
	script := string(files[cassandraScript])
	script = script[:strings.Index(script, "exec ")] + "exit 0\n"
	if err := os.WriteFile(filepath.Join(d, "render.sh"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	render := func(addr string) (string, error) {
		out, err := exec.Command("sh", filepath.Join(d, "render.sh"), d, run, addr, "9042").CombinedOutput()
		if err != nil {
			return string(out), err
		}
		y, rerr := os.ReadFile(filepath.Join(run, cassandraYAML))
		return string(y), rerr
	}
	y, err := render("0.0.0.0")
	if err != nil {
		t.Fatalf("%v: %s", err, y)
	}
	for _, want := range []string{"listen_address: 127.0.0.1\n", "rpc_address: 0.0.0.0\n", "broadcast_rpc_address: 127.0.0.1\n",
		`seeds: "127.0.0.1"`, "native_transport_port: 9042\n"} {
		if !strings.Contains(y, want) {
			t.Errorf("wildcard: yaml lacks %q:\n%s", want, y)
		}
	}
	if strings.Contains(y, "@") || strings.Contains(y, "storage_port") {
		t.Errorf("a placeholder or a fixed storage port is left:\n%s", y)
	}
	if y, err = render("127.0.0.1"); err != nil || strings.Contains(y, "broadcast_rpc_address") ||
		!strings.Contains(y, "listen_address: 127.0.0.1\n") {
		t.Errorf("loopback: %v\n%s", err, y)
	}
	os.Remove(filepath.Join(run, cassandraYAML))
	if out, err := render("1.2.3.4/g;s/x"); err == nil || !strings.Contains(out, "bad address") {
		t.Errorf("an address with sed syntax: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(run, cassandraYAML)); !os.IsNotExist(err) {
		t.Errorf("a yaml was written for a refused address: %v", err)
	}
}

// TestCassandraCredentialFile: the launcher reads "ROLE PASSWORD" from the credential file;
// the password is nowhere else.
func TestCassandraCredentialFile(t *testing.T) {
	files := dbms.WithPassword(Cassandra{}, "0123456789abcdef0123456789abcdef").ConfigFiles(dbms.Settings{})
	if got := string(files[dbms.CredentialFile]); got != CassandraUser+" 0123456789abcdef0123456789abcdef\n" {
		t.Errorf("credential file %q", got)
	}
	for n, b := range files {
		if n != dbms.CredentialFile && strings.Contains(string(b), "0123456789abcdef") {
			t.Errorf("%s holds the password", n)
		}
	}
	argv := dbms.WithPassword(Cassandra{}, "pw").StartCommand(dbms.Layout{DataDir: "/d", RunDir: "/r", Listen: "127.0.0.1", Port: 40000})
	if got := strings.Join(argv[2:], " "); got != "/d /r 127.0.0.1 40000 setpassword" {
		t.Errorf("start command %q", got)
	}
}

// TestCassandraVersionMatchesScript: the jars the dbms runs are the ones `make setup` resolves.
func TestCassandraVersionMatchesScript(t *testing.T) {
	b, err := os.ReadFile("../../scripts/cassandra.sh")
	if err != nil {
		t.Fatal(err)
	}
	if want := "CASSANDRA_VERSION=${CASSANDRA_VERSION:-" + CassandraVersion + "}"; !strings.Contains(string(b), want) {
		t.Errorf("scripts/cassandra.sh does not default to %s (want the line %q)", CassandraVersion, want)
	}
}
