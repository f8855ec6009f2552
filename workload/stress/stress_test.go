package stress

import (
	"os"
	"strings"
	"testing"
	"time"
)

// testdata/cpu1-vm1.yaml was captured on the development host with:
//
//	stress-ng --cpu 1 --vm 1 --vm-bytes 64M --timeout 1s --metrics-brief --yaml /dev/stdout
func TestParse(t *testing.T) {
	b, err := os.ReadFile("testdata/cpu1-vm1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Stressor != "cpu" || ms[1].Stressor != "vm" || ms[0].BogoOps <= 0 || ms[1].PerSecond <= 0 {
		t.Errorf("%+v", ms)
	}
	if _, err := Parse([]byte("metrics: []\n")); err == nil {
		t.Error("empty metrics must be an error")
	}
}

func TestValidate(t *testing.T) {
	_, err := New(Config{Duration: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "cpu and vm are both 0") || !strings.Contains(err.Error(), "whole seconds") {
		t.Errorf("got %v", err)
	}
	w, err := New(Config{CPU: 1, VM: 1, Duration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.Argv(), " "); got != "stress-ng --timeout 3s --metrics-brief --yaml /dev/stdout --cpu 1 --vm 1 --vm-bytes 268435456" {
		t.Errorf("argv: %s", got)
	}
}
