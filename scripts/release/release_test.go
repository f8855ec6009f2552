// Package release tests `make release` and `make build` as a user runs them: the binaries they
// make, the version and commit those print, SHA256SUMS, the manual pages and the completion
// scripts (scripts/release.sh, scripts/version.sh, cmd/gendocs). The release builds two
// binaries: skipped under -short.
package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
	"github.com/boxbench/boxbench/version"
)

// root is the repository's top, where the Makefile is.
const root = "../.."

// TestRelease runs `make release` into a new directory and checks what it made: both binaries
// static ELF files of their architecture built with the release's flags, the amd64 one printing
// the checkout's version and commit (on an amd64 host), SHA256SUMS listing every file with its
// hash, the manual pages, and completion scripts that are what the binary prints and that bash
// sources and completes with.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds boxbench for linux/amd64 and linux/arm64; -short")
	}
	testenv.NeedCommands(t, "make", "git", "bash", "sha256sum")
	ver, commit := checkout(t)
	dist := filepath.Join(t.TempDir(), "dist")
	run(t, 20*time.Minute, root, "make", "-s", "release", "DIST="+dist)

	files := checkSums(t, dist)
	for _, arch := range []string{"amd64", "arm64"} {
		name := "boxbench-" + ver + "-linux-" + arch
		if !files[name] {
			t.Fatalf("%s: no %s (files: %v)", dist, name, sorted(files))
		}
		checkBinary(t, filepath.Join(dist, name), arch, ver, commit)
	}
	checkManPages(t, dist, files, ver)
	if runtime.GOARCH != "amd64" {
		testenv.Skip(t, "the amd64 binary runs only on amd64; this host is "+runtime.GOARCH)
	}
	bin := filepath.Join(dist, "boxbench-"+ver+"-linux-amd64")
	checkVersion(t, bin, ver, commit)
	checkCompletions(t, bin, dist)
}

// TestBuildVersion: `make build` (the version and commit it links in, its own or given) and a
// plain `go build` (no linker flags: the version from version/VERSION, the commit from Go's
// record of git) both print this checkout's version and commit.
func TestBuildVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds boxbench twice; -short")
	}
	testenv.NeedCommands(t, "make", "git")
	ver, commit := checkout(t)
	dir := t.TempDir()

	made := filepath.Join(dir, "made")
	run(t, 20*time.Minute, root, "make", "-s", "build", "BIN="+made)
	checkVersion(t, made, ver, commit)
	// What the Makefile links is what the binary prints, not what it would print anyway (in a
	// clean checkout the embedded VERSION and Go's record of git say the same as the linker).
	linked := filepath.Join(dir, "linked")
	other := strings.Repeat("0123456789", 4)
	run(t, 20*time.Minute, root, "make", "-s", "build", "BIN="+linked, "VERSION=9.8.7-linked", "COMMIT="+other)
	checkVersion(t, linked, "9.8.7-linked", other)

	// -buildvcs=true: a GOFLAGS of -buildvcs=false (some hosts set it) would leave the commit
	// out; -trimpath only to share make build's compiled packages. Go records git's commit only
	// in a checkout whose .git is a directory, not in a worktree (.git a file): there the
	// commit is unknown.
	plain := filepath.Join(dir, "plain")
	run(t, 20*time.Minute, root, "go", "build", "-trimpath", "-buildvcs=true", "-o", plain, "./cmd/boxbench")
	want, wantCommit := version.Base(), commit
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		t.Logf("%s/.git is not a directory (a worktree): go build records no commit", root)
		wantCommit = "unknown"
	} else if strings.HasSuffix(ver, "dirty") {
		want += "+dirty"
	}
	checkVersion(t, plain, want, wantCommit)
}

// checkout is the version scripts/version.sh gives this checkout (TestVersionScript holds its
// rules) and its commit.
func checkout(t *testing.T) (ver, commit string) {
	t.Helper()
	ver = strings.TrimSpace(run(t, time.Minute, root, "bash", "scripts/version.sh"))
	if !strings.HasPrefix(ver, version.Base()) {
		t.Fatalf("scripts/version.sh = %q, not version/VERSION's %q", ver, version.Base())
	}
	commit = strings.TrimSpace(run(t, time.Minute, root, "git", "rev-parse", "HEAD"))
	return ver, commit
}

// checkVersion: `bin version` names ver and the full commit.
func checkVersion(t *testing.T, bin, ver, commit string) {
	t.Helper()
	out := run(t, time.Minute, "", bin, "version")
	want := fmt.Sprintf("boxbench %s (commit %s, go", ver, commit)
	if !strings.HasPrefix(out, want) {
		t.Errorf("%s version printed %q, want it to begin with %q", filepath.Base(bin), out, want)
	}
}

// checkSums checks SHA256SUMS: sha256sum's own format and check, every other file listed
// once, each hash that file's. It returns the files listed.
func checkSums(t *testing.T, dist string) map[string]bool {
	t.Helper()
	run(t, time.Minute, dist, "sha256sum", "--check", "--strict", "--quiet", "SHA256SUMS")
	data, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^([0-9a-f]{64})  ([^/\s][^\s]*)$`)
	listed := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("SHA256SUMS line %q is not \"HASH  NAME\"", l)
		}
		if listed[m[2]] {
			t.Errorf("SHA256SUMS lists %s twice", m[2])
		}
		listed[m[2]] = true
		body, err := os.ReadFile(filepath.Join(dist, m[2]))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != m[1] {
			t.Errorf("SHA256SUMS: %s is %x, listed as %s", m[2], sum, m[1])
		}
	}
	err = filepath.WalkDir(dist, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dist, path)
		if rel != "SHA256SUMS" && !listed[rel] {
			t.Errorf("%s is not in SHA256SUMS", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return listed
}

// checkBinary: a static ELF executable for arch (no interpreter, no dynamic section), built
// without cgo, with -trimpath and the version and commit linked in.
func checkBinary(t *testing.T, path, arch, ver, commit string) {
	t.Helper()
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	if f.Machine != machine || f.Type != elf.ET_EXEC || f.Class != elf.ELFCLASS64 {
		t.Errorf("%s: ELF %v %v %v, want %v ET_EXEC ELFCLASS64", filepath.Base(path), f.Machine, f.Type, f.Class, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s: has %v, not a static binary", filepath.Base(path), p.Type)
		}
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	for k, want := range map[string]string{"GOOS": "linux", "GOARCH": arch, "CGO_ENABLED": "0", "-trimpath": "true"} {
		if set[k] != want {
			t.Errorf("%s: build setting %s = %q, want %q", filepath.Base(path), k, set[k], want)
		}
	}
	// Go records no -ldflags under -trimpath, and -s -w leaves no symbol to read the variables
	// by: the linked strings are in the file. (The amd64 binary, built by the same command,
	// prints them: checkVersion.)
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{ver, commit} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("%s: %q is not linked in", filepath.Base(path), want)
		}
	}
}

// checkManPages: a page for boxbench and one for each command and subcommand a user sees (none
// for the hidden agent), each naming the release.
func checkManPages(t *testing.T, dist string, files map[string]bool, ver string) {
	t.Helper()
	for _, name := range []string{"boxbench.1", "boxbench-run.1", "boxbench-images-build.1", "boxbench-completion-bash.1"} {
		if !files["man/"+name] {
			t.Errorf("no man/%s (files: %v)", name, sorted(files))
		}
	}
	if files["man/boxbench-agent.1"] {
		t.Error("man/boxbench-agent.1: the agent command is hidden")
	}
	page, err := os.ReadFile(filepath.Join(dist, "man", "boxbench-run.1"))
	if err != nil {
		t.Fatal(err)
	}
	th := regexp.MustCompile(`(?m)^\.TH "BOXBENCH(\\)?-RUN" "1" "[A-Z][a-z]{2} \d{4}" "boxbench ` + regexp.QuoteMeta(ver) + `" "boxbench manual"$`)
	if !th.Match(page) || !bytes.Contains(page, []byte(`\fB--out\fP`)) || bytes.Contains(page, []byte("Auto generated")) {
		t.Errorf("man/boxbench-run.1 lacks its .TH line (%s), its --out flag or has cobra's tag:\n%s", th, page)
	}
}

// checkCompletions: each script is what `boxbench completion SHELL` prints; bash reads the
// bash one (bash -n) and, sourced, completes a command and a subcommand through the binary.
func checkCompletions(t *testing.T, bin, dist string) {
	t.Helper()
	for shell, file := range map[string]string{"bash": "boxbench.bash", "zsh": "_boxbench", "fish": "boxbench.fish"} {
		got, err := os.ReadFile(filepath.Join(dist, "completion", file))
		if err != nil {
			t.Fatal(err)
		}
		if want := run(t, time.Minute, "", bin, "completion", shell); string(got) != want {
			t.Errorf("completion/%s differs from `boxbench completion %s`", file, shell)
		}
	}
	script := filepath.Join(dist, "completion", "boxbench.bash")
	run(t, time.Minute, "", "bash", "-n", script)
	for line, want := range map[string]string{"ver": "version", "images bu": "build"} {
		if got := complete(t, bin, script, line); got != want {
			t.Errorf("completing %q: %q, want %q", "boxbench "+line, got, want)
		}
	}
}

// complete sources script in a new bash and asks it to complete "bin LINE" as bash would at
// a tab, returning the completions, one a line. bash-completion's _get_comp_words_by_ref,
// which the script calls when that package is not loaded, is defined for words without
// COMP_WORDBREAKS characters, which is all these are.
func complete(t *testing.T, bin, script, line string) string {
	t.Helper()
	const harness = `
_get_comp_words_by_ref() {
  cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cword=$COMP_CWORD
  words=("${COMP_WORDS[@]}")
}
source "$1"
COMP_LINE="$2" COMP_POINT=${#2} COMP_TYPE=9
read -ra COMP_WORDS <<<"$2"
[ "${2: -1}" = " " ] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
__start_boxbench
printf '%s\n' "${COMPREPLY[@]}"
`
	out := run(t, time.Minute, "", "bash", "-c", harness, "complete", script, bin+" "+line)
	return strings.TrimSpace(out)
}

// run runs argv in dir (the test's own when "") and returns its stdout, failing the test
// with its output when it fails. make sees none of a calling make's flags (make test).
func run(t *testing.T, limit time.Duration, dir string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s%s", strings.Join(argv, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func sorted(set map[string]bool) []string {
	var names []string
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
