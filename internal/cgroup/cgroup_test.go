package cgroup_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/resource"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestGroupLifecycle creates a real group with limits, reads them back from the kernel, puts a
// process in it, applies weights, and deletes it (killing the process).
func TestGroupLifecycle(t *testing.T) {
	testenv.NeedRoot(t)
	path := fmt.Sprintf("/boxbench/test-cgroup-%d/g", os.Getpid())
	g, err := Create(path, resource.Limits{CPUs: 0.5, Cpuset: "0", MemoryBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer At(strings.TrimSuffix(path, "/g")).Remove()
	defer g.Delete()
	got, err := g.Ref.ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	if got.CPUs != 0.5 || got.Cpuset != "0" || got.MemoryBytes != 256<<20 {
		t.Errorf("read back %+v", got)
	}
	args := append([]string{"-c", `for f; do echo $$ > "$f"; done; exec sleep 60`, "sh"}, g.ProcsFiles()...)
	cmd := exec.Command("/bin/sh", args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids, _ := g.Pids()
		if len(pids) == 1 && pids[0] == cmd.Process.Pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never appeared in %s: %v", cmd.Process.Pid, path, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	done, err := g.Ref.ApplyShares(resource.Limits{CPUWeight: 50, IOWeight: 30}, "")
	if err != nil {
		t.Fatal(err)
	}
	if g.Ref.Layout() == V1 {
		b, _ := os.ReadFile(g.Ref.Dir("cpu") + "/cpu.shares")
		if strings.TrimSpace(string(b)) != "512" || !strings.Contains(done["cpu_weight"], "512") {
			t.Errorf("cpu.shares %q, recorded %q", b, done["cpu_weight"])
		}
	}
	if back, err := g.Ref.ReadLimits(); err != nil || back.CPUWeight != 50 {
		t.Errorf("cpu weight read back as %d (%v), want 50", back.CPUWeight, err)
	}
	if done["io_weight"] == "" {
		t.Error("io weight outcome not recorded")
	}
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Ref.Dir("memory")); !os.IsNotExist(err) {
		t.Errorf("group still exists after Delete: %v", err)
	}
	// The experiment's group is boxbench's own: it goes with its last run.
	exp := At(strings.TrimSuffix(path, "/g"))
	for _, ctrl := range []string{"memory", "cpu", ""} {
		if _, err := os.Stat(exp.Dir(ctrl)); !os.IsNotExist(err) && (ctrl != "" || exp.Layout() == V2) {
			t.Errorf("experiment group %s left behind after Delete: %v", exp.Dir(ctrl), err)
		}
	}
	if err := g.Delete(); err != nil {
		t.Errorf("second Delete: %v", err)
	}
}

func TestScheduler(t *testing.T) {
	if s := Scheduler(""); !strings.HasPrefix(s, "none") {
		t.Errorf("no device: %q", s)
	}
	if s := Scheduler("999999:999"); s != "unknown" {
		t.Errorf("missing device: %q", s)
	}
}
