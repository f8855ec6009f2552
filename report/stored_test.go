package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A calibration's floors are kept under the work root and read back for the same host only.
func TestStoredCalibration(t *testing.T) {
	const base = "cpus=0.50/replica=a"
	var a, b []float64
	for r := 0; r < 8; r++ {
		a = append(a, 40000*(1+0.03*float64(r%3)))
		b = append(b, 40000*(1+0.03*float64((r+1)%3)))
	}
	env := map[string]string{"cpu_model": "AMD EPYC", "num_cpu": "2", "kernel": "6.18"}
	rep := &Report{Keys: []string{"cpus", "replica"}, Env: env, Experiment: Experiment{ID: "calibrate-1", CreatedAt: "2026-11-27T00:00:00Z"},
		Cells: []*Cell{calCell("a", "0.50", base, a), calCell("b", "0.50", base, b)}}
	s, ok := rep.Stored()
	if !ok {
		t.Fatal("no calibration to keep")
	}
	cal := rep.calibrations()[0]
	if len(s.Floors) != 2 || s.Floors[1].N != 8 || s.Floors[1].Unpaired != cal.Sizes[1].NoiseFloorUnpaired.Median ||
		s.Floors[1].Paired != cal.Sizes[1].NoiseFloorPaired.Median || math.IsNaN(s.Floors[1].Unpaired) || s.Duet {
		t.Fatalf("kept %+v from %+v", s, cal.Sizes)
	}
	dir := filepath.Join(t.TempDir(), "work")
	if got, err := LoadCalibration(dir); got != nil || err != nil {
		t.Fatalf("nothing kept yet: %+v %v", got, err)
	}
	if err := SaveCalibration(dir, s); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCalibration(dir)
	if err != nil || got == nil || got.Floors[1] != s.Floors[1] || got.Experiment != "calibrate-1" {
		t.Fatalf("read back %+v %v", got, err)
	}
	if !got.SameHost(env) || got.SameHost(map[string]string{"cpu_model": "Intel", "num_cpu": "2", "kernel": "6.18"}) {
		t.Error("SameHost")
	}
	if err := os.WriteFile(filepath.Join(dir, CalibrationFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCalibration(dir); err == nil {
		t.Error("a damaged file read without error")
	}
	// A planted calibration is refused, not forecast with: a link, a FIFO (which must not
	// block), another's file, absurd floors.
	calPath := filepath.Join(dir, CalibrationFile)
	plant := func(what string, make func() error) {
		t.Helper()
		os.Remove(calPath)
		if err := make(); err != nil {
			t.Fatal(err)
		}
		if got, err := LoadCalibration(dir); err == nil {
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
	for _, f := range []StoredFloor{{N: 0, Unpaired: 5}, {N: 8, Unpaired: -1}, {N: 8, Paired: 1e300}, {N: 1 << 30, Unpaired: 5}} {
		bad := *s
		bad.Floors = []StoredFloor{f}
		b, _ := json.Marshal(bad)
		plant(fmt.Sprintf("floor %+v", f), func() error { return os.WriteFile(calPath, b, 0o644) })
	}
	if _, ok := (&Report{Keys: []string{"cpus"}}).Stored(); ok {
		t.Error("an experiment without the replica key kept a calibration")
	}
}
