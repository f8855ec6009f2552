package dbms_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/redis"
)

type noUser struct{ redis.Redis }

func (noUser) User() string { return "boxbench-no-such-user" }

type noBinary struct{ redis.Redis }

func (noBinary) StartCommand(l dbms.Layout) []string { return []string{"/nonexistent/redis-server"} }

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		d    dbms.DBMS
		says []string
	}{
		{noUser{}, []string{`system user "boxbench-no-such-user"`, "apt-get install -y redis-server", "useradd --system"}},
		{noBinary{}, []string{"redis is not installed", "/nonexistent/redis-server missing", "apt-get install -y redis-server"}},
	} {
		err := dbms.Missing(tc.d)
		if err == nil {
			t.Fatalf("%T: nothing missing", tc.d)
		}
		for _, s := range tc.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%T: %q lacks %q", tc.d, err, s)
			}
		}
	}
}

type builtAt struct {
	redis.Redis
	files []string
}

func (b builtAt) Traits() dbms.Traits { return dbms.Traits{BuiltFiles: b.files} }

// TestMissingBuiltFiles: a built file need only exist (a jar is not executable); missing ones
// are counted in one line.
func TestMissingBuiltFiles(t *testing.T) {
	dir := t.TempDir()
	jar := filepath.Join(dir, "a.jar")
	if err := os.WriteFile(jar, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dbms.Missing(builtAt{files: []string{jar}}); err != nil && strings.Contains(err.Error(), "not built") {
		t.Errorf("a present, non-executable built file is reported missing: %v", err)
	}
	err := dbms.Missing(builtAt{files: []string{jar, dir + "/b.jar", dir + "/c.jar"}})
	if err == nil || !strings.Contains(err.Error(), "2 files missing, "+dir+"/b.jar first") {
		t.Errorf("two missing built files: %v", err)
	}
}
