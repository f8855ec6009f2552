package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAwait(t *testing.T) {
	dir := t.TempDir()
	pending := filepath.Join(dir, LocalCluster+".pending")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	soon := time.Now().Add(time.Minute)
	if err := await(dir, LocalCluster, soon, time.Millisecond, t.Logf); err != nil {
		t.Errorf("nothing pending: %v", err)
	}

	write(pending, "")
	go func() { time.Sleep(50 * time.Millisecond); os.Remove(pending) }()
	var said []string
	logf := func(f string, a ...any) { said = append(said, f) }
	if err := await(dir, LocalCluster, soon, time.Millisecond, logf); err != nil || len(said) != 2 {
		t.Errorf("pending, then ready: %v, said %q", err, said)
	}
	if exists(pending) {
		t.Fatal("await returned while the prerequisite was pending")
	}

	write(pending, "")
	if err := await(dir, LocalCluster, time.Now().Add(20*time.Millisecond), time.Millisecond, t.Logf); err == nil ||
		!strings.Contains(err.Error(), "was not ready after") {
		t.Errorf("past the deadline: %v", err)
	}
	os.Remove(pending)

	write(filepath.Join(dir, LocalCluster+".failed"), "exit status 1; the end of its log:\nno kubelet\n")
	if err := await(dir, LocalCluster, soon, time.Millisecond, t.Logf); err == nil ||
		!strings.Contains(err.Error(), "local-cluster failed: exit status 1") || !strings.Contains(err.Error(), "no kubelet") {
		t.Errorf("failed: %v", err)
	}
	if err := await(dir, GuestImages, soon, time.Millisecond, t.Logf); err != nil {
		t.Errorf("another prerequisite's failure is not this one's: %v", err)
	}
}
