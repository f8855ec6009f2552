package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestSilentCluster: plan on a kubernetes spec whose kubeconfig names an API server that
// accepts TCP connections and never answers ends (well within 60 s) with exit 64 and the
// unreachable cluster named, and no stack trace.
func TestSilentCluster(t *testing.T) {
	bin := testBinary(t)
	addr, _ := testenv.Silent(t, "tcp") // the TLS handshake waits for ever
	dir := t.TempDir()
	server := "https://" + addr
	kubeconfig := filepath.Join(dir, "silent.kubeconfig")
	kc := "apiVersion: v1\nkind: Config\ncurrent-context: silent\n" +
		"clusters: [{name: silent, cluster: {server: \"" + server + "\", insecure-skip-tls-verify: true}}]\n" +
		"users: [{name: u, user: {token: t}}]\n" +
		"contexts: [{name: silent, context: {cluster: silent, user: u}}]\n"
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "kube.yaml")
	body := strings.Replace(silentSpec, "matrix: {platform: [docker], network: [host, bridge-published]}",
		"kubernetes: {kubeconfig: "+kubeconfig+"}\nmatrix: {platform: [kubernetes], storage: [emptydir], network: [host, pod]}", 1)
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr := startBinary(t, bin, nil, nil, "--work-root", filepath.Join(dir, "work"), "plan", spec)
	r := waitBinary(t, cmd, stdout, stderr, 60*time.Second)
	if want := "no reachable cluster at " + server; r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want %d and %q\nstderr: %s", r.code, ExitUsage, want, r.stderr)
	}
}
