package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMissingTmpdirBinary: run on a native spec with a TMPDIR that does not exist is refused
// before anything starts (exit 64), with a message naming TMPDIR, its value and what is valid;
// the directory is not created (it was, as root's 0700, and the server then failed to bind).
func TestMissingTmpdirBinary(t *testing.T) {
	bin := testBinary(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "tmp")
	spec := filepath.Join(dir, "native.yaml")
	body := strings.Replace(silentSpec, "matrix: {platform: [docker], network: [host, bridge-published]}", "matrix: {platform: [native]}", 1)
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd, stdout, stderr := startBinary(t, bin, []string{"TMPDIR=" + missing}, nil,
		"--work-root", filepath.Join(dir, "work"), "run", "--out", out, spec)
	r := waitBinary(t, cmd, stdout, stderr, 60*time.Second)
	want := "TMPDIR=" + missing + " does not exist, and boxbench does not create it"
	if r.code != ExitUsage || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "valid: an existing directory every user can search") {
		t.Errorf("exit %d, want %d and %q\nstderr: %s", r.code, ExitUsage, want, r.stderr)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("TMPDIR's parent was created: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out was claimed: %v", err)
	}
}
