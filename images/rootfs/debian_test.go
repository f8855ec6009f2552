package rootfs

import (
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/postgresql"
	redisdb "github.com/boxbench/boxbench/dbms/redis"
)

// The fixtures were captured from a bookworm host and a debootstrapped root filesystem; mirror
// host names are replaced by example.invalid, and one removed-but-not-purged package was added
// to dpkg-status.

func TestParseSources(t *testing.T) {
	const m, sec = "http://mirror.example.invalid/debian", "http://mirror.example.invalid/debian-security"
	for _, tc := range []struct {
		file  string
		parse func(io.Reader) ([]Source, error)
		suite string
		want  []Source
	}{
		{"testdata/debian.sources", parseDeb822, "bookworm", []Source{
			{m, "bookworm", []string{"main"}}, {sec, "bookworm-security", []string{"main"}},
			{m, "bookworm-updates", []string{"main"}}}},
		{"testdata/debian.sources", parseDeb822, "trixie", nil},
		{"testdata/sources.list", parseOneLine, "bookworm", []Source{
			{m, "bookworm", []string{"main", "contrib"}}, {sec, "bookworm-security", []string{"main"}}}},
		{"testdata/sources.list", parseOneLine, "sid", nil},
	} {
		f, err := os.Open(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		all, err := tc.parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := forSuite(all, tc.suite); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s:\n got %v\nwant %v", tc.file, tc.suite, got, tc.want)
		}
	}
}

func TestParseStatus(t *testing.T) {
	f, err := os.Open("testdata/dpkg-status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := ParseStatus(f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"postgresql-15": "15.18-0+deb12u1", "fio": "3.33-3",
		"libc6": "2.36-9+deb12u14", "base-files": "12.4+deb12u15"}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %q, want %q", k, v[k], w)
		}
	}
	if _, ok := v["removed-example"]; ok || len(v) != len(want) {
		t.Errorf("got %v: a removed package counted, or a package missing", v)
	}
	if got := ParseVersions(FormatVersions(v)); len(got) != len(v) || got["postgresql-15"] != v["postgresql-15"] {
		t.Errorf("versions label round trip: %v", got)
	}
}

func TestParsePasswd(t *testing.T) {
	f, err := os.Open("testdata/passwd")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	uid, gid, err := ParsePasswd(f, "postgres")
	if err != nil || uid != 100 || gid != 103 {
		t.Errorf("postgres: %d:%d %v, want 100:103", uid, gid, err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ParsePasswd(f, "nobody-here"); err == nil {
		t.Error("missing user: no error")
	}
}

func TestRecipe(t *testing.T) {
	var pg dbms.DBMS = postgresql.PostgreSQL{}
	src := []Source{{URI: "http://mirror.example.invalid/debian", Suite: "bookworm"}}
	pins := map[string]string{"postgresql-15": "15.18-0+deb12u1"}
	a := NewRecipe(pg, "bookworm", src, pins)
	b := NewRecipe(pg, "bookworm", src, map[string]string{"postgresql-15": "15.18-0+deb12u1"})
	if a.Hash() != b.Hash() || len(a.Hash()) != 64 {
		t.Fatalf("hash not stable: %s %s", a.Hash(), b.Hash())
	}
	if !slices.Contains(a.Packages, "fio") || !slices.Contains(a.Packages, "postgresql-15") || a.Mirror() != src[0].URI {
		t.Errorf("recipe %+v", a)
	}
	other := []Source{{URI: "http://other.example.invalid/debian", Suite: "bookworm"}}
	for name, r := range map[string]Recipe{
		"mirror":  NewRecipe(pg, "bookworm", other, pins),
		"suite":   NewRecipe(pg, "trixie", src, pins),
		"pins":    NewRecipe(pg, "bookworm", src, map[string]string{"postgresql-15": "15.19-0+deb12u1"}),
		"sources": NewRecipe(pg, "bookworm", append(src, Source{URI: src[0].URI, Suite: "bookworm-updates"}), pins),
		"version": func() Recipe { r := a; r.Version++; return r }(),
		"dbms":    func() Recipe { r := redisdb.Redis{}; return NewRecipe(r, "bookworm", src, pins) }(),
	} {
		if r.Hash() == a.Hash() {
			t.Errorf("changing the %s does not change the hash", name)
		}
	}
}

func TestSourcesFile(t *testing.T) {
	all, err := parseDeb822(strings.NewReader(sourcesFile([]Source{
		{URI: "http://mirror.example.invalid/debian", Suite: "bookworm", Components: []string{"main"}},
		{URI: "http://mirror.example.invalid/debian-security", Suite: "bookworm-security"}})))
	if err != nil || len(all) != 2 || all[1].Suite != "bookworm-security" || all[1].Components[0] != "main" {
		t.Errorf("sources file does not parse back: %v %v", all, err)
	}
}
