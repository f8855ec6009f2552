package rootfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/cachedir"
	"github.com/boxbench/boxbench/internal/prereq"
)

// DefaultRoot is where trees are cached unless the user says otherwise ($BOXBENCH_CACHE/rootfs).
var DefaultRoot = cachedir.Path("rootfs")

// ErrNotBuilt means the cache has no tree for the current recipe.
var ErrNotBuilt = errors.New("root filesystem not built")

// Files of a cache entry Root/<dbms>-<hash16>/, beside the root filesystem itself.
const (
	treeDir    = "rootfs"
	recipeFile = "recipe.json" // the Recipe, canonical JSON: its sha256 is the hash
	treeFile   = "tree.json"   // the Tree (without Dir)
	// tmpPrefix names the directories a build or a removal works in, next to the entries. The
	// leading dot keeps them from ever matching an entry name.
	tmpPrefix = ".boxbench-"
)

// Cache holds built trees under Root, one per recipe.
//
// A tree is built in a temporary directory next to its entry and renamed into place only when
// complete, so a crash never leaves a half tree that Find accepts. Builds of the same recipe are
// serialised by an flock on Root/<entry>.lock, across processes, so two boxbench runs build it
// once. A Cache is safe for concurrent use. Trees are read-only once published (see Tree).
type Cache struct {
	Root  string // DefaultRoot when ""
	Log   *slog.Logger
	Suite string // Debian suite; DefaultSuite when ""
	// Sources replace the host's apt sources (Sources[0] is the suite's mirror) when set.
	Sources []Source
	// There is no separate temporary directory: a build works next to its entry so that the
	// rename publishing it stays on one filesystem and is atomic.

	// build makes r's root filesystem in dir (which does not exist yet); buildDebian when nil.
	// Tests replace it: it is the process boundary to debootstrap and apt.
	build func(ctx context.Context, r Recipe, dir string) error
}

// NewCache returns a cache under root (DefaultRoot when "") with the defaults.
func NewCache(root string, log *slog.Logger) *Cache {
	return &Cache{Root: root, Log: log}
}

func (c *Cache) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c.Log
}

func (c *Cache) root() (string, error) {
	root := c.Root
	if root == "" {
		root = DefaultRoot
	}
	abs, err := filepath.Abs(root) // mount checks compare absolute paths
	if err != nil {
		return "", fmt.Errorf("rootfs cache %s: %w", root, err)
	}
	return abs, nil
}

// Recipe returns the recipe d's tree is built from on this host: the host's apt sources for
// the suite, and the host's installed versions of d's packages as pins.
func (c *Cache) Recipe(ctx context.Context, d dbms.DBMS) (Recipe, error) {
	suite := c.Suite
	if suite == "" {
		suite = DefaultSuite
	}
	sources := c.Sources
	if len(sources) == 0 {
		var err error
		if sources, err = HostSources(suite); err != nil {
			return Recipe{}, err
		}
	}
	r := NewRecipe(d, suite, sources, nil)
	pins := map[string]string{}
	for _, p := range r.Packages {
		if v, err := HostVersion(ctx, p); err == nil {
			pins[p] = v
		}
	}
	if len(pins) > 0 {
		r.Pins = pins
	}
	if files := dbms.BuiltFiles(d); len(files) > 0 {
		r.Files = map[string]string{}
		for _, p := range files {
			sum, err := fileHash(p)
			if err != nil {
				// The same need as the native platform's (dbms.Missing): one command, listed once.
				return Recipe{}, prereq.New(dbms.BuildNeed(d), fmt.Errorf("%s needs %s, built by `make setup STEPS=%s`: %w", d.Name(), p, d.Name(), err))
			}
			r.Files[p] = sum
		}
	}
	return r, nil
}

// Find returns d's tree for the current recipe, or an error wrapping ErrNotBuilt that says how
// to build it.
func (c *Cache) Find(ctx context.Context, d dbms.DBMS) (Tree, error) {
	r, err := c.Recipe(ctx, d)
	if err != nil {
		return Tree{}, err
	}
	t, err := c.FindRecipe(r)
	if errors.Is(err, ErrNotBuilt) {
		err = prereq.New(c.Need(r.DBMS, "boxbench images build --dbms "+r.DBMS), err)
	}
	return t, err
}

// FindRecipe returns r's tree, or an error wrapping ErrNotBuilt.
func (c *Cache) FindRecipe(r Recipe) (Tree, error) {
	root, name, err := c.entry(r)
	if err != nil {
		return Tree{}, err
	}
	return load(filepath.Join(root, name), r.Hash())
}

// Get returns d's tree for the current recipe, building it when the cache has none (true: built
// now). A build in another process is waited for, not repeated. Cancelling ctx stops the build
// and removes its work directory.
func (c *Cache) Get(ctx context.Context, d dbms.DBMS) (Tree, bool, error) {
	r, err := c.Recipe(ctx, d)
	if err != nil {
		return Tree{}, false, err
	}
	root, name, err := c.entry(r)
	if err != nil {
		return Tree{}, false, err
	}
	final := filepath.Join(root, name)
	if t, err := load(final, r.Hash()); !errors.Is(err, ErrNotBuilt) {
		return t, false, err // found, or unreadable
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Tree{}, false, fmt.Errorf("rootfs cache: %w", err)
	}
	unlock, err := c.lock(ctx, root, name)
	if err != nil {
		return Tree{}, false, err
	}
	defer unlock()
	if t, err := load(final, r.Hash()); !errors.Is(err, ErrNotBuilt) {
		return t, false, err // another process built it while we waited
	}
	// Holding the lock, nobody else works on this entry: what is there is a dead build's.
	if err := c.removeStale(ctx, root, name, true); err != nil {
		return Tree{}, false, err
	}
	t, err := c.buildEntry(ctx, r, d, root, name)
	if err != nil {
		return Tree{}, false, fmt.Errorf("build %s root filesystem: %w", r.DBMS, err)
	}
	return t, true, nil
}

// buildEntry builds r's tree in a work directory and renames it to root/name when complete.
func (c *Cache) buildEntry(ctx context.Context, r Recipe, d dbms.DBMS, root, name string) (Tree, error) {
	work, err := os.MkdirTemp(root, tmpPrefix+"build-"+name+"-")
	if err != nil {
		return Tree{}, err
	}
	defer func() {
		if work == "" {
			return // published
		}
		if err := removeDir(context.WithoutCancel(ctx), work, true); err != nil {
			c.log().Error("remove root filesystem work directory", "dir", work, "err", err)
		}
	}()
	if err := os.Chmod(work, 0o755); err != nil { // boxes read trees as any user
		return Tree{}, err
	}
	start := time.Now()
	build := c.build
	if build == nil {
		build = c.buildDebian
	}
	dir := filepath.Join(work, treeDir)
	if err := build(ctx, r, dir); err != nil {
		return Tree{}, err
	}
	t, err := readTree(r, d, dir)
	if err != nil {
		return Tree{}, err
	}
	t.BuildSeconds = time.Since(start).Seconds()
	tj, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return Tree{}, err
	}
	if err := os.WriteFile(filepath.Join(work, recipeFile), []byte(r.JSON()), 0o644); err != nil {
		return Tree{}, err
	}
	if err := os.WriteFile(filepath.Join(work, treeFile), tj, 0o644); err != nil {
		return Tree{}, err
	}
	// The rename publishes the tree; its contents must be on disk first, or a power loss could
	// leave a published entry with empty files.
	if err := syncfs(work); err != nil {
		return Tree{}, err
	}
	final := filepath.Join(root, name)
	if err := os.Rename(work, final); err != nil {
		return Tree{}, fmt.Errorf("publish %s: %w", final, err)
	}
	work = ""
	t.Dir = filepath.Join(final, treeDir)
	c.log().Info("root filesystem built", "dbms", r.DBMS, "dir", t.Dir, t.ServerPackage, t.ServerVersion,
		"seconds", time.Since(start).Seconds())
	return t, nil
}

func syncfs(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// entry returns the cache root and the entry name of r, after checking r's dbms name.
func (c *Cache) entry(r Recipe) (root, name string, err error) {
	if root, err = c.root(); err != nil {
		return "", "", err
	}
	name, err = entryName(r)
	return root, name, err
}

// load reads a published entry whose recipe hash is want ("": whichever it holds); anything
// missing or inconsistent is "not built".
func load(entry, want string) (Tree, error) {
	b, err := os.ReadFile(filepath.Join(entry, treeFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Tree{}, fmt.Errorf("%w: no tree at %s", ErrNotBuilt, entry)
	} else if err != nil {
		return Tree{}, fmt.Errorf("read root filesystem %s: %w", entry, err)
	}
	var t Tree
	if err := json.Unmarshal(b, &t); err != nil {
		return Tree{}, fmt.Errorf("%w: %s/%s: %v", ErrNotBuilt, entry, treeFile, err)
	}
	if t.Recipe.Hash() != t.Hash || (want != "" && t.Hash != want) ||
		filepath.Base(entry) != t.DBMS+"-"+t.Hash[:min(16, len(t.Hash))] {
		return Tree{}, fmt.Errorf("%w: %s holds inputs %.16s, want %.16s", ErrNotBuilt, entry, t.Hash, want)
	}
	t.Dir = filepath.Join(entry, treeDir)
	if fi, err := os.Stat(t.Dir); err != nil || !fi.IsDir() {
		return Tree{}, fmt.Errorf("%w: %s has no root filesystem", ErrNotBuilt, entry)
	}
	return t, nil
}
