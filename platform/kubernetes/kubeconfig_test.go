package kubernetes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/platform"
)

// hostileKubeconfig writes a kubeconfig whose user runs an exec credential plugin that creates
// marker, against a server nothing listens on.
func hostileKubeconfig(t *testing.T, dir, marker string) string {
	t.Helper()
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: /bin/sh
      args: ["-c", "touch %s; echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"x\"}}'"]
      interactiveMode: Never
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, marker)
	p := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func check(t *testing.T, p *Platform) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return p.Check(ctx, platform.Choice{Storage: StorageEmptyDir, Network: NetworkPod})
}

// TestKubeconfigNeverRunsAPlugin is the attack: a spec names a kubeconfig (one another
// user dropped in /tmp, or one of root's own) whose exec plugin would create a marker file; a
// spec-named context does the same through the user's own KUBECONFIG; plan refuses plugins
// even of the user's own configuration. None may run it. The control — the user's own
// KUBECONFIG with its current context during run — does run it, so the attack is real.
func TestKubeconfigNeverRunsAPlugin(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	cases := []struct {
		name  string
		setup func(p *Platform, kc string)
		want  string
	}{
		{"foreign file named by the spec", func(p *Platform, kc string) {
			if err := os.Chown(kc, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			p.Configure(Config{Kubeconfig: kc})
		}, "owned by uid 65534"},
		{"own file named by the spec", func(p *Platform, kc string) { p.Configure(Config{Kubeconfig: kc}) }, "the spec named the kubeconfig"},
		{"context named by the spec", func(p *Platform, kc string) {
			t.Setenv("KUBECONFIG", kc)
			p.Configure(Config{Context: "ctx"})
		}, "the spec named the context"},
		{"plan", func(p *Platform, kc string) {
			t.Setenv("KUBECONFIG", kc)
			p.Configure(Config{})
			p.NoCredentialCommands()
		}, "plan never runs a program"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(dir, "ran")
			kc := hostileKubeconfig(t, dir, marker)
			p := New(nil, nil)
			c.setup(p, kc)
			err := check(t, p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("want a refusal saying %q, got %v", c.want, err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the exec plugin ran")
			}
		})
	}
	t.Run("control: the user's own kubeconfig during run", func(t *testing.T) {
		dir := t.TempDir()
		marker := filepath.Join(dir, "ran")
		t.Setenv("KUBECONFIG", hostileKubeconfig(t, dir, marker))
		p := New(nil, nil)
		p.Configure(Config{})
		_ = check(t, p) // the server does not answer
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("the user's own plugin did not run: the attack above proves nothing (%v)", err)
		}
	})
}

// TestKubeconfigNotAFile: a spec-named kubeconfig that is a device, a FIFO, a link to either,
// or larger than MaxKubeconfigBytes is refused at once, naming what it is.
func TestKubeconfigNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, MaxKubeconfigBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/dev/zero": "character device", "/dev/stdin": "symbolic link",
		fifo: "FIFO", link: "symbolic link", big: "larger than"} {
		p := New(nil, nil)
		p.Configure(Config{Kubeconfig: path})
		done := make(chan error, 1)
		go func() { done <- check(t, p) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: want a refusal naming it and saying %q, got %v", path, want, err)
			}
		case <-time.After(30 * time.Second): // a hang, not a timing assert
			t.Fatalf("%s: Check blocked", path)
		}
	}
}

// TestKubeconfigNamedCluster: a named cluster's kubeconfig that is missing or refused is named
// by its own field (kubernetes.clusters.NAME.kubeconfig), a missing one with the likely cause,
// never as kubernetes.kubeconfig.
func TestKubeconfigNamedCluster(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "missing"): "(kubernetes.clusters.far.kubeconfig names it: is that cluster up?)",
		fifo:                          "(kubernetes.clusters.far.kubeconfig: a kubeconfig a spec names must be a regular file",
	} {
		p := New(nil, nil)
		p.Configure(Config{Clusters: map[string]ClusterRef{"far": {Kubeconfig: path}}})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := p.Check(ctx, platform.Choice{Storage: StorageEmptyDir, Network: NetworkPod, Cluster: "far"})
		cancel()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) ||
			strings.Contains(err.Error(), "kubernetes.kubeconfig") {
			t.Errorf("%s: want an error naming it and saying %q (and not kubernetes.kubeconfig), got %v", path, want, err)
		}
	}
}
