package rootfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/flock"
)

// The Debian base every tree starts from: one debootstrap of the minimal system with the
// packages every tree has (ExtraPackages), brought up to date from the host's apt sources, kept
// under Root/bases/<suite>-<arch>-<hash16>/ with its apt lists. A tree is a copy of it with its
// database's packages installed at the host's versions, so building N trees costs one
// debootstrap and N installs instead of N debootstraps.
//
// A base is keyed by what decides it: suite, sources, architecture, its packages, how it is
// built (RecipeVersion) and the host's apt lists (their Release files): when the host has seen
// a new state of the mirror (apt-get update), the next tree starts from a new base, as it would
// have started from a new debootstrap. The tree's Recipe and hash do not change: they say what
// the tree holds, not how it was made.
const basesDir = "bases"

// AptLists is where the host's apt keeps its lists; a variable only so tests can point at
// fixtures.
var AptLists = "/var/lib/apt/lists"

var baseEntry = regexp.MustCompile(`^[a-z0-9]+-[a-z0-9]+-[0-9a-f]{16}$`)

// baseInputs is everything that decides a base.
type baseInputs struct {
	Suite    string   `json:"suite"`
	Sources  []Source `json:"sources"`
	Arch     string   `json:"arch"`
	Packages []string `json:"packages"`
	Lists    string   `json:"lists"` // sha256 of the host's apt Release files
	Version  int      `json:"recipe_version"`
}

func newBaseInputs(r Recipe) baseInputs {
	pkgs := append([]string(nil), ExtraPackages...)
	sort.Strings(pkgs)
	return baseInputs{Suite: r.Suite, Sources: r.Sources, Arch: r.Arch, Packages: pkgs,
		Lists: listsFingerprint(AptLists), Version: RecipeVersion}
}

func (b baseInputs) name() string {
	j, _ := json.Marshal(b) // strings, ints and slices of them always encode
	s := sha256.Sum256(j)
	return b.Suite + "-" + b.Arch + "-" + hex.EncodeToString(s[:])[:16]
}

// listsFingerprint hashes the names and contents of the Release files under dir: they change
// exactly when apt-get update found a new state of a source. "" when there are none.
func listsFingerprint(dir string) string {
	var files []string
	for _, pat := range []string{"*_InRelease", "*_Release"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		return ""
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fmt.Fprintf(h, "%s %x\x00", filepath.Base(f), sha256.Sum256(b))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// withBase calls fn with the root filesystem of r's base, building the base first when the
// cache has none. The base is held with a shared lock while fn runs (fn copies it), so that a
// newer base's build never removes it from under fn.
func (c *Cache) withBase(ctx context.Context, r Recipe, fn func(base string) error) error {
	root, err := c.root()
	if err != nil {
		return err
	}
	bases := filepath.Join(root, basesDir)
	if err := os.MkdirAll(bases, 0o755); err != nil {
		return fmt.Errorf("rootfs cache: %w", err)
	}
	in := newBaseInputs(r)
	name := in.name()
	final := filepath.Join(bases, name)
	lock := final + ".lock"
	for {
		if _, err := os.Stat(filepath.Join(final, treeDir)); err == nil {
			unlock, err := flock.Shared(ctx, lock, nil)
			if err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(final, treeDir)); err == nil {
				err = fn(filepath.Join(final, treeDir))
				unlock()
				return err
			}
			unlock() // removed while we waited: build it again
		}
		unlock, err := flock.Lock(ctx, lock, func() {
			c.log().Info("waiting for another build of the Debian base", "lock", lock)
		})
		if err != nil {
			return err
		}
		if _, err = os.Stat(filepath.Join(final, treeDir)); err != nil {
			// Holding the lock, nobody else works on this base: what is there is a dead build's.
			if err = removeDir(ctx, final, true); err == nil {
				err = c.buildBase(ctx, r, in, bases, name)
			}
		}
		unlock()
		if err != nil {
			return err
		}
		c.removeOtherBases(ctx, bases, name)
	}
}

// buildBase debootstraps the base in a work directory and renames it into place when complete.
// The caller holds the base's lock: any work directory of the same base is a dead build's.
func (c *Cache) buildBase(ctx context.Context, r Recipe, in baseInputs, bases, name string) error {
	left, _ := filepath.Glob(filepath.Join(bases, tmpPrefix+"*-"+name+"-*"))
	for _, dir := range left {
		if err := removeDir(ctx, dir, true); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp(bases, tmpPrefix+"build-"+name+"-")
	if err != nil {
		return err
	}
	defer func() {
		if work == "" {
			return // published
		}
		if err := removeDir(context.WithoutCancel(ctx), work, true); err != nil {
			c.log().Error("remove the Debian base's work directory", "dir", work, "err", err)
		}
	}()
	if err := os.Chmod(work, 0o755); err != nil {
		return err
	}
	start := time.Now()
	c.log().Info("building the Debian base of every root filesystem", "suite", in.Suite, "packages", in.Packages)
	dir := filepath.Join(work, treeDir)
	base := Recipe{Packages: in.Packages, Suite: in.Suite, Sources: in.Sources, Arch: in.Arch}
	if err := debootstrap(ctx, base, dir); err != nil {
		return fmt.Errorf("build the Debian base: %w", err)
	}
	if err := withAptPolicy(dir, func(apt aptRunner) error {
		if err := writeSources(dir, r.Sources); err != nil {
			return err
		}
		if err := apt(ctx, "update"); err != nil {
			return err
		}
		if err := apt(ctx, "dist-upgrade"); err != nil {
			return err
		}
		return apt(ctx, "clean") // the lists stay: the trees install from them
	}); err != nil {
		return fmt.Errorf("build the Debian base: %w", err)
	}
	j, _ := json.MarshalIndent(in, "", "  ")
	if err := os.WriteFile(filepath.Join(work, "inputs.json"), j, 0o644); err != nil {
		return err
	}
	if err := syncfs(work); err != nil {
		return err
	}
	final := filepath.Join(bases, name)
	if err := os.Rename(work, final); err != nil {
		return fmt.Errorf("publish %s: %w", final, err)
	}
	work = ""
	c.log().Info("Debian base built", "dir", final, "seconds", time.Since(start).Seconds())
	return nil
}

// removeOtherBases removes the bases other than keep that nobody is using (a tree being copied
// from one holds its shared lock), and what dead builds and removals left: a new base replaces
// them.
func (c *Cache) removeOtherBases(ctx context.Context, bases, keep string) {
	ents, _ := os.ReadDir(bases)
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, tmpPrefix) {
			name = staleBase(name)
		}
		if !e.IsDir() || name == keep || !baseEntry.MatchString(name) {
			continue
		}
		unlock, ok, err := flock.TryLock(filepath.Join(bases, name+".lock"))
		if err != nil || !ok {
			continue
		}
		dir := filepath.Join(bases, e.Name())
		if e.Name() == name { // a published base: unpublish with one rename, then delete
			gone := filepath.Join(bases, fmt.Sprintf("%sremove-%s-%d", tmpPrefix, name, time.Now().UnixNano()))
			if err := os.Rename(dir, gone); err != nil {
				unlock()
				continue
			}
			dir = gone
		}
		if err := removeDir(ctx, dir, true); err != nil {
			c.log().Warn("remove an outdated Debian base", "dir", dir, "err", err)
		} else {
			c.log().Info("removed an outdated Debian base", "dir", dir)
		}
		unlock()
	}
}

// staleBase is the base name of a work directory ".boxbench-<verb>-<name>-<suffix>" ("" when
// it is none).
func staleBase(dir string) string {
	rest, _ := strings.CutPrefix(dir, tmpPrefix)
	_, rest, _ = strings.Cut(rest, "-")
	if i := strings.LastIndexByte(rest, '-'); i > 0 {
		return rest[:i]
	}
	return ""
}

// copyTree copies a base's root filesystem to dir (which must not exist), sharing blocks where
// the filesystem can (reflink), with owners, modes, links and times.
func copyTree(ctx context.Context, base, dir string) error {
	_, err := command.Run(ctx, "cp", "-a", "--reflink=auto", base, dir)
	return err
}
