package runner

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/testkit/testenv"
)

func TestCheckWorkRoot(t *testing.T) {
	testenv.NeedRoot(t)
	base := testenv.WorkRoot(t)
	mk := func(name string, mode os.FileMode, uid int) string {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, 0); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sticky := mk("sticky", 0o777|os.ModeSticky, 0)
	open := mk("open", 0o777, 0)
	linkToEtc := filepath.Join(base, "link-to-etc")
	if err := os.Symlink("/etc", linkToEtc); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir, want string
	}{
		{mk("good", 0o755, 0), ""},
		{filepath.Join(base, "absent", "made"), ""}, // created
		{filepath.Join(sticky, "under-sticky"), ""},
		{mk("world", 0o777, 0), "chmod go-w"},
		{mk("group", 0o775, 0), "chmod go-w"},
		{mk("nobody", 0o755, 65534), "chown root:root"},
		{mk("open/child", 0o755, 0), "chmod go-w \"" + open + "\""},
		{sticky, "chmod go-w"}, // the work root itself may not be world-writable, sticky or not
		{"/", "system directory /"},
		{"/etc/boxbench-test-work-root", "system directory /etc"},
		{base + "/a/ghost/../dd", `".." component`},
		{linkToEtc, "system directory /etc"},
		{linkToEtc + "/boxbench-test-work-root", "system directory /etc"},
	} {
		err := CheckWorkRoot(tc.dir)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckWorkRoot(%s) = %v, want %q", tc.dir, err, tc.want)
		}
	}
	// Refused before anything was made.
	for _, p := range []string{"/etc/boxbench-test-work-root", "/etc/seeds", "/etc/locks", "/seeds", "/locks", filepath.Join(base, "a")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

// A seed directory is used only when boxbench made and finished it.
func TestSeedTrust(t *testing.T) {
	testenv.NeedRoot(t)
	dir := filepath.Join(testenv.WorkRoot(t), "seeds")
	s := newSeedCache(dir, "exp", nil, "", slog.New(slog.DiscardHandler))
	seed := func(key string) SeedInfo {
		info := SeedInfo{Dir: filepath.Join(dir, key), Key: key}
		if err := os.MkdirAll(info.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		return info
	}
	good := seed("redis-good")
	good.Platform = "lxc"
	if err := writeMarker(good); err != nil {
		t.Fatal(err)
	}
	if !s.trusted(good) {
		t.Error("a complete seed is not trusted")
	}
	if got := loadedBy(good); got != "lxc" {
		t.Errorf("loaded by %q, want lxc (from the marker)", got)
	}
	if s.trusted(seed("redis-unmarked")) {
		t.Error("a seed without its completion marker is trusted")
	}
	other := seed("redis-other")
	if err := os.WriteFile(markerOf(other), []byte("boxbench seed redis-good\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s.trusted(other) {
		t.Error("a marker naming another seed is trusted")
	}
	link := SeedInfo{Dir: filepath.Join(dir, "redis-link"), Key: "redis-link"}
	if err := os.Symlink("/etc", link.Dir); err != nil {
		t.Fatal(err)
	}
	if err := writeMarker(link); err != nil {
		t.Fatal(err)
	}
	if s.trusted(link) {
		t.Error("a symbolic link is trusted as a seed")
	}
	loose := seed("redis-loose")
	if err := writeMarker(loose); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose.Dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if s.trusted(loose) {
		t.Error("a world-writable seed is trusted")
	}
	// A captured seed is owned by the database's system user (cp -a keeps the data directory's
	// owner and its 0700): that is how every real seed looks, and it must be trusted.
	captured := seed("redis-captured")
	if err := os.Chown(captured.Dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := writeMarker(captured); err != nil {
		t.Fatal(err)
	}
	if !s.trusted(captured) {
		t.Error("a seed owned by the database's user (as captured) is not trusted: every run would load it again")
	}
	if s.trusted(SeedInfo{Dir: filepath.Join(dir, "absent"), Key: "absent"}) {
		t.Error("an absent seed is trusted")
	}
}
