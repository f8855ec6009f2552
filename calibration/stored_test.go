package calibration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A calibration's floors are kept under the work root and read back for the same host only;
// a planted one is refused.
func TestStoredCalibration(t *testing.T) {
	env := map[string]string{"cpu_model": "AMD EPYC", "num_cpu": "2", "kernel": "6.18", "other": "x"}
	s := &Stored{Experiment: "calibrate-1", CreatedAt: "2026-11-27T00:00:00Z", Series: "throughput", Host: Host(env),
		Floors: []Floor{{N: 4, Tests: 4, Unpaired: 12.5, Paired: 3.25}, {N: 8, Tests: 1, Unpaired: 9, Paired: 2}}}
	if len(s.Host) != 3 || s.Host["other"] != "" {
		t.Fatalf("Host(env) = %v, want the three keys that identify a host", s.Host)
	}
	dir := filepath.Join(t.TempDir(), "work")
	if got, err := Load(dir); got != nil || err != nil {
		t.Fatalf("nothing kept yet: %+v %v", got, err)
	}
	if err := Save(dir, s); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil || got == nil || got.Floors[1] != s.Floors[1] || got.Experiment != "calibrate-1" {
		t.Fatalf("read back %+v %v", got, err)
	}
	if !got.SameHost(env) || got.SameHost(map[string]string{"cpu_model": "Intel", "num_cpu": "2", "kernel": "6.18"}) {
		t.Error("SameHost")
	}
	if err := os.WriteFile(filepath.Join(dir, File), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Error("a damaged file read without error")
	}
	// A planted calibration is refused, not forecast with: a link, a FIFO (which must not
	// block), another's file, absurd floors.
	calPath := filepath.Join(dir, File)
	plant := func(what string, make func() error) {
		t.Helper()
		os.Remove(calPath)
		if err := make(); err != nil {
			t.Fatal(err)
		}
		if got, err := Load(dir); err == nil {
			t.Errorf("%s: read as %+v", what, got)
		}
	}
	good, _ := json.Marshal(s)
	other := filepath.Join(t.TempDir(), "planted.json")
	if err := os.WriteFile(other, good, 0o644); err != nil {
		t.Fatal(err)
	}
	plant("a link", func() error { return os.Symlink(other, calPath) })
	plant("a FIFO", func() error { return syscall.Mkfifo(calPath, 0o644) })
	plant("world-writable", func() error {
		if err := os.WriteFile(calPath, good, 0o644); err != nil {
			return err
		}
		return os.Chmod(calPath, 0o666)
	})
	for _, f := range []Floor{{N: 0, Unpaired: 5}, {N: 8, Unpaired: -1}, {N: 8, Paired: 1e300}, {N: 1 << 30, Unpaired: 5}} {
		bad := *s
		bad.Floors = []Floor{f}
		b, _ := json.Marshal(bad)
		plant(fmt.Sprintf("floor %+v", f), func() error { return os.WriteFile(calPath, b, 0o644) })
	}
}
