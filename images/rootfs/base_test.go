package rootfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/postgresql"
	redisdb "github.com/boxbench/boxbench/dbms/redis"
)

// The base is keyed by what decides it: the same host gives the same base for every database;
// a host apt-get update that saw a new mirror state (a changed Release file) gives a new one.
func TestBaseKey(t *testing.T) {
	lists := t.TempDir()
	old := AptLists
	AptLists = lists
	t.Cleanup(func() { AptLists = old })
	release := filepath.Join(lists, "deb.example_debian_dists_bookworm_InRelease")
	if err := os.WriteFile(release, []byte("Date: Sat, 01 Nov 2026\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := []Source{{URI: "http://deb.example/debian", Suite: DefaultSuite, Components: []string{"main"}}}
	var redis dbms.DBMS = redisdb.Redis{}
	var pg dbms.DBMS = postgresql.PostgreSQL{}
	a := newBaseInputs(NewRecipe(redis, DefaultSuite, src, map[string]string{"redis-server": "1"}))
	b := newBaseInputs(NewRecipe(pg, DefaultSuite, src, nil))
	if a.name() != b.name() {
		t.Errorf("two databases on one host get different bases: %s, %s", a.name(), b.name())
	}
	if !baseEntry.MatchString(a.name()) {
		t.Errorf("base name %q does not match its pattern", a.name())
	}
	if err := os.WriteFile(release, []byte("Date: Thu, 27 Nov 2026\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := newBaseInputs(NewRecipe(redis, DefaultSuite, src, nil)); c.name() == a.name() {
		t.Error("a new mirror state kept the old base")
	}
	other := append([]Source{}, src...)
	other[0].URI = "http://mirror.example/debian"
	if c := newBaseInputs(NewRecipe(redis, DefaultSuite, other, nil)); c.name() == newBaseInputs(NewRecipe(redis, DefaultSuite, src, nil)).name() {
		t.Error("another mirror kept the same base")
	}
	if got := listsFingerprint(t.TempDir()); got != "" {
		t.Errorf("no lists: fingerprint %q, want empty", got)
	}
}

func TestStaleBase(t *testing.T) {
	for in, want := range map[string]string{
		".boxbench-build-bookworm-amd64-0123456789abcdef-123456":         "bookworm-amd64-0123456789abcdef",
		".boxbench-remove-bookworm-amd64-0123456789abcdef-1764201600000": "bookworm-amd64-0123456789abcdef",
		".boxbench-build": "",
	} {
		if got := staleBase(in); got != want {
			t.Errorf("staleBase(%q) = %q, want %q", in, got, want)
		}
	}
}
