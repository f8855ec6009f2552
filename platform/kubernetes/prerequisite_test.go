package kubernetes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The local cluster's kubeconfig absent is the prerequisite `make kube-up`; present (the
// cluster up but not answering) or another kubeconfig is a reason, as before.
func TestLocalClusterDown(t *testing.T) {
	dir := t.TempDir()
	absent, present := filepath.Join(dir, "admin.kubeconfig"), filepath.Join(dir, "other.kubeconfig")
	if err := os.WriteFile(present, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	errOf := func(path string) error {
		return fmt.Errorf("kubeconfig %s: open %s: no such file or directory", path, path)
	}
	if !localDown(errOf(absent), absent) {
		t.Error("an absent local kubeconfig is not the cluster down")
	}
	if localDown(errOf(present), present) || localDown(errOf(present), absent) {
		t.Error("a kubeconfig that exists, or another one, is taken for the local cluster down")
	}
	n := localClusterNeed()
	if n.Command != "make kube-up" || n.Takes <= 0 || !strings.Contains(n.Basis, "2-vCPU") {
		t.Errorf("need %+v", n)
	}
}
