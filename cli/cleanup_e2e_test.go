package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDoctorCleanupHostileMarkers: through the binary, `doctor --cleanup` of a crashed
// experiment (its lock under the work root, unheld) whose boxes' markers name what boxbench did
// not create — an LXC container path with ".." reaching a canary directory outside the work root
// (it was removed, through LXC's lock tree), a VM marker's group outside /boxbench — refuses
// each marker with a message naming the file and the field, exits 1 without a stack trace, and
// the canary survives.
func TestDoctorCleanupHostileMarkers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("doctor --cleanup runs as root")
	}
	bin := testBinary(t)
	canary := filepath.Join(t.TempDir(), "canary")
	if err := os.MkdirAll(canary, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(canary, "keep"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), "work")
	const exp = "hostile-1a2b3c4d"
	plant := func(path string, m map[string]string) {
		b, _ := json.Marshal(m)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(work, "locks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "locks", exp+".lock"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plant(filepath.Join(work, exp, "r0001", "lxc-box.json"), map[string]string{"experiment": exp, "run": "r0001",
		"name": "bb-r0001", "lxcpath": "/../../.." + canary, "cgroup": "/boxbench/" + exp + "/r0001"})
	plant(filepath.Join(work, exp, "r0002", "vm-box.json"), map[string]string{"experiment": exp, "run": "r0002",
		"cgroup": "/boxbench/../docker"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "doctor", "--cleanup", "--work-root", work)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("doctor --cleanup: %v, want exit status 1", err)
	}
	for _, want := range []string{"lxc-box.json", `lxcpath "/../../..` + canary, "vm-box.json", `cgroup "/boxbench/../docker"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output does not say %q", want)
		}
	}
	if strings.Contains(string(out), "goroutine ") {
		t.Error("a Go stack trace")
	}
	if _, err := os.Stat(filepath.Join(canary, "keep")); err != nil {
		t.Errorf("the canary outside the work root: %v", err)
	}
}
