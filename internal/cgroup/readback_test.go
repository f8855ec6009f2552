package cgroup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/internal/resource"
)

func TestCPUsAndWeights(t *testing.T) {
	for _, tc := range []struct {
		quota, period string
		want          float64
		bad           bool
	}{
		{"20000", "100000", 0.2, false},
		{"-1", "100000", 0, false},
		{"max", "100000", 0, false},
		{"150000", "100000", 1.5, false},
		{"x", "100000", 0, true},
		{"1000", "0", 0, true},
	} {
		got, err := cpusOf(tc.quota, tc.period)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("cpusOf(%s, %s) = %g, %v", tc.quota, tc.period, got, err)
		}
	}
	for in, want := range map[string]int{"100": 100, "default 100": 100, "default 250\n8:0 50": 250} {
		if got, err := parseWeight(in); err != nil || got != want {
			t.Errorf("parseWeight(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := parseWeight("a b c"); err == nil {
		t.Error("parseWeight: no error on garbage")
	}
}

func TestWeightConversions(t *testing.T) {
	for _, w := range []int{1, 33, 50, 100, 200, 300, 1000, 10000} {
		if got := CPUWeightFromShares(SharesOf(w)); w >= 2 && got != w {
			t.Errorf("weight %d -> shares %d -> weight %d", w, SharesOf(w), got)
		}
	}
}

// TestReadIOMax reads throttle rules from v1 and v2 files, ignoring boxbench's accounting rule
// and other devices.
func TestReadIOMax(t *testing.T) {
	root := t.TempDir()
	old := Root
	Root = root
	defer func() { Root = old }()
	ref := On(V1, "/g")
	dir := filepath.Join(root, "blkio", "g")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("blkio.throttle.read_bps_device", "254:0 1125899906842624\n")
	write("blkio.throttle.write_bps_device", "254:0 67108864\n8:0 5\n")
	write("blkio.throttle.write_iops_device", "254:0 1000\n")
	got, err := ref.ReadIOMax("254:0")
	if err != nil {
		t.Fatal(err)
	}
	if want := (resource.Limits{WriteBps: 64 << 20, WriteIOPS: 1000}); got != want {
		t.Errorf("v1: %+v, want %+v", got, want)
	}
	v2 := On(V2, "/g")
	if err := os.MkdirAll(filepath.Join(root, "g"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "g", "io.max"),
		[]byte("8:0 rbps=1 wbps=max riops=max wiops=max\n254:0 rbps=max wbps=1048576 riops=max wiops=300\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = v2.ReadIOMax("254:0")
	if err != nil {
		t.Fatal(err)
	}
	if want := (resource.Limits{WriteBps: 1 << 20, WriteIOPS: 300}); got != want {
		t.Errorf("v2: %+v, want %+v", got, want)
	}
}
