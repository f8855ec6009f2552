package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeV2 makes a fixture v2 root offering ctrls, with the given subtree_control.
func fakeV2(t *testing.T, ctrls, subtree string) {
	t.Helper()
	dir := t.TempDir()
	old := Root
	Root = dir
	t.Cleanup(func() { Root = old; clear(madeParents) })
	must(t, os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte(ctrls+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(subtree+"\n"), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root, p))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

func TestPrepareV2(t *testing.T) {
	// A typical systemd host: the root delegates cpu, memory and pids but not io or cpuset.
	fakeV2(t, "cpuset cpu io memory hugetlb pids rdma misc", "cpu memory pids")
	must(t, prepareV2("/boxbench/exp/run"))
	if got := read(t, "cgroup.subtree_control"); got != "cpu memory pids +cpuset +io" {
		t.Errorf("root subtree_control %q: only the missing controllers are added", got)
	}
	for _, p := range []string{"boxbench", "boxbench/exp"} {
		if got := read(t, p+"/cgroup.subtree_control"); got != "+cpu +cpuset +io +memory +pids" {
			t.Errorf("%s subtree_control %q", p, got)
		}
	}
	if _, err := os.Stat(filepath.Join(Root, "boxbench/exp/run")); !os.IsNotExist(err) {
		t.Error("the run's own group is the library's to create")
	}
	if !madeParents["/boxbench"] || !madeParents["/boxbench/exp"] {
		t.Errorf("made %v", madeParents)
	}
	// Again: nothing more is written.
	must(t, prepareV2("/boxbench/exp/run2"))
	if got := read(t, "boxbench/cgroup.subtree_control"); got != "+cpu +cpuset +io +memory +pids" {
		t.Errorf("second prepare rewrote: %q", got)
	}
}

func TestPrepareV2RefusesMissingController(t *testing.T) {
	fakeV2(t, "cpuset cpu memory pids", "cpu memory pids")
	err := prepareV2("/boxbench/exp/run")
	if err == nil || !strings.Contains(err.Error(), "the io controller") {
		t.Fatalf("err = %v, want a refusal naming io", err)
	}
	if _, err := os.Stat(filepath.Join(Root, "boxbench")); !os.IsNotExist(err) {
		t.Error("created groups before refusing")
	}
}

func TestRemoveParents(t *testing.T) {
	dirs := func(p string) []string { return groupDirs(V2, p) }
	t.Run("ours", func(t *testing.T) {
		fakeV2(t, strings.Join(Controllers, " "), "")
		must(t, prepareV2("/boxbench/exp/run"))
		// A fixture directory is not a cgroup: its control files must go for rmdir to work.
		for _, p := range []string{"boxbench/exp", "boxbench"} {
			must(t, os.Remove(filepath.Join(Root, p, "cgroup.subtree_control")))
		}
		removeParents("/boxbench/exp/run", dirs)
		if _, err := os.Stat(filepath.Join(Root, "boxbench")); !os.IsNotExist(err) {
			t.Errorf("/boxbench left behind: %v", err)
		}
	})
	t.Run("not ours", func(t *testing.T) {
		fakeV2(t, strings.Join(Controllers, " "), "")
		must(t, os.MkdirAll(filepath.Join(Root, "boxbench/exp"), 0o755))
		removeParents("/boxbench/exp/run", dirs)
		if _, err := os.Stat(filepath.Join(Root, "boxbench/exp")); !os.IsNotExist(err) {
			t.Error("the experiment's group stays")
		}
		if _, err := os.Stat(filepath.Join(Root, "boxbench")); err != nil {
			t.Error("removed a /boxbench this process did not create")
		}
	})
	t.Run("still used", func(t *testing.T) {
		fakeV2(t, strings.Join(Controllers, " "), "")
		must(t, os.MkdirAll(filepath.Join(Root, "boxbench/exp/other-run"), 0o755))
		madeParents["/boxbench"] = true
		removeParents("/boxbench/exp/run", dirs)
		if _, err := os.Stat(filepath.Join(Root, "boxbench/exp/other-run")); err != nil {
			t.Error("removed a group still in use")
		}
	})
}
