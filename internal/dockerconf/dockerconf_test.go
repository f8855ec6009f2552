package dockerconf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var ours = []Runtime{
	{Name: "runsc", Path: "/var/cache/boxbench/runsc/v0/runsc"},
	{Name: "runsc-host", Path: "/var/cache/boxbench/runsc/v0/runsc", Args: []string{"--network=host"}},
}

// TestMergeKeepsTheRest: a user's settings, other runtimes and number spellings survive; our
// entries are added or replaced; a second merge changes nothing.
func TestMergeKeepsTheRest(t *testing.T) {
	old := []byte(`{"log-level": "warn", "max-concurrent-downloads": 3.50, "default-ulimits": {"nofile": {"Name": "nofile", "Hard": 65536, "Soft": 65536}},
 "runtimes": {"kata": {"runtimeType": "io.containerd.kata.v2"}, "runsc": {"path": "/usr/bin/runsc"}}}`)
	out, changed, err := Merge(old, ours)
	if err != nil || !changed {
		t.Fatalf("merge: changed=%v err=%v", changed, err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if string(got["max-concurrent-downloads"]) != "3.50" || string(got["log-level"]) != `"warn"` {
		t.Errorf("other keys changed: %s", out)
	}
	if !strings.Contains(string(got["default-ulimits"]), `"Hard": 65536`) {
		t.Errorf("nested settings changed: %s", got["default-ulimits"])
	}
	var rts map[string]struct {
		Path        string   `json:"path"`
		RuntimeType string   `json:"runtimeType"`
		Args        []string `json:"runtimeArgs"`
	}
	if err := json.Unmarshal(got["runtimes"], &rts); err != nil {
		t.Fatal(err)
	}
	if rts["kata"].RuntimeType != "io.containerd.kata.v2" {
		t.Errorf("a user's runtime was lost: %+v", rts)
	}
	if rts["runsc"].Path != ours[0].Path || rts["runsc-host"].Path != ours[1].Path ||
		len(rts["runsc-host"].Args) != 1 || rts["runsc-host"].Args[0] != "--network=host" {
		t.Errorf("our runtimes: %+v", rts)
	}
	again, changed, err := Merge(out, ours)
	if err != nil || changed || string(again) != string(out) {
		t.Errorf("second merge changed the file (changed=%v err=%v)", changed, err)
	}
}

func TestMergeEmptyAndBad(t *testing.T) {
	for _, old := range []string{"", "  \n", "{}", `{"runtimes": null}`} {
		out, changed, err := Merge([]byte(old), ours)
		if err != nil || !changed || !strings.Contains(string(out), `"runsc-host"`) {
			t.Errorf("Merge(%q) = %s %v %v", old, out, changed, err)
		}
	}
	for old, want := range map[string]string{
		"[1]":                  "not a JSON object",
		`{"runtimes": [1]}`:    `"runtimes" is not an object`,
		`{"log-level": "warn"`: "not a JSON object",
	} {
		if _, _, err := Merge([]byte(old), ours); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Merge(%q) = %v, want %q", old, err, want)
		}
	}
	_, _, err := Merge(nil, []Runtime{{Name: "Bad Name", Path: "rel/runsc", Args: []string{"-x y"}}})
	for _, want := range []string{`"Bad Name"`, `"rel/runsc"`, `"-x y"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("invalid runtime: %v, want it to name %s", err, want)
		}
	}
}

// TestWrite keeps the file's mode and reports no change the second time.
func TestWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "docker", "daemon.json")
	if changed, err := Write(p, ours); err != nil || !changed {
		t.Fatalf("first write: %v %v", changed, err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := Write(p, ours[:1]); err != nil || changed {
		t.Fatalf("unchanged write: %v %v", changed, err)
	}
	if changed, err := Write(p, []Runtime{{Name: "runsc", Path: "/opt/runsc"}}); err != nil || !changed {
		t.Fatalf("changed write: %v %v", changed, err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after rewrite: %v %v", fi.Mode(), err)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// TestDaemonPID: only a live dockerd named in the pidfile is ever a target.
func TestDaemonPID(t *testing.T) {
	dir := t.TempDir()
	pf := filepath.Join(dir, "docker.pid")
	if pid, err := DaemonPID(pf); pid != 0 || err != nil {
		t.Errorf("absent pidfile: %d %v", pid, err)
	}
	os.WriteFile(pf, []byte(strconv.Itoa(os.Getpid())), 0o644)
	if pid, err := DaemonPID(pf); pid != 0 || err != nil {
		t.Errorf("a pidfile naming a process that is not dockerd: %d %v", pid, err)
	}
	os.WriteFile(pf, []byte("1"), 0o644)
	if _, err := DaemonPID(pf); err == nil {
		t.Error("pid 1 accepted")
	}
	os.WriteFile(pf, []byte("garbage"), 0o644)
	if _, err := DaemonPID(pf); err == nil {
		t.Error("garbage accepted")
	}
	if ok, err := Reload(filepath.Join(dir, "none.pid")); ok || err != nil {
		t.Errorf("reload without a daemon: %v %v", ok, err)
	}
}
