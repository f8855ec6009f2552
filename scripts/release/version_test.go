package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestVersionScript holds scripts/version.sh's rules in a repository of its own: VERSION's
// version before its tag exists and at the tag; after it, the commits since and the commit as
// build metadata; "dirty" for a modified tree; another version's tag ignored; a VERSION that is
// not a semantic version refused, naming it.
func TestVersionScript(t *testing.T) {
	testenv.NeedCommands(t, "git", "bash")
	dir := t.TempDir()
	body, err := os.ReadFile(filepath.Join(root, "scripts", "version.sh"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "scripts/version.sh", string(body))
	write(t, dir, "version/VERSION", "0.1.0\n")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		// No user's or system's configuration (signing, hooks, a default branch name).
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(msg string) {
		t.Helper()
		git("add", "-A")
		git("commit", "-q", "--allow-empty", "-m", msg)
	}
	// The script in dir, which git never takes for a part of a repository around it.
	script := func() *exec.Cmd {
		cmd := exec.Command("bash", filepath.Join(dir, "scripts", "version.sh"))
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
		return cmd
	}
	versionIs := func(want string) {
		t.Helper()
		out, err := script().CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("version.sh = %q (%v), want %q", got, err, want)
		}
	}

	versionIs("0.1.0") // not a git checkout
	git("init", "-q")
	commit("first")
	git("tag", "v0.0.9") // another version's tag
	versionIs("0.1.0")
	write(t, dir, "new", "x")
	versionIs("0.1.0+dirty")
	commit("second")
	git("tag", "v0.1.0")
	versionIs("0.1.0")
	commit("third")
	commit("fourth")
	versionIs("0.1.0+2.g" + git("rev-parse", "--short", "HEAD"))
	write(t, dir, "new", "y")
	versionIs("0.1.0+2.g" + git("rev-parse", "--short", "HEAD") + ".dirty")

	for _, bad := range []string{"0.1", "v0.1.0", "01.0.0", "0.1.0+meta"} {
		write(t, dir, "version/VERSION", bad+"\n")
		out, err := script().CombinedOutput()
		if err == nil || !strings.Contains(string(out), `version/VERSION: "`+bad+`" is not a semantic version`) {
			t.Errorf("VERSION %q: %v, %q; want it refused, naming it", bad, err, out)
		}
	}
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
