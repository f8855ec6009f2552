package rootfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/flock"
)

// lock takes the exclusive build lock of entry name, waiting for another holder until ctx ends.
func (c *Cache) lock(ctx context.Context, root, name string) (unlock func(), err error) {
	path := filepath.Join(root, name+".lock")
	return flock.Lock(ctx, path, func() {
		c.log().Info("waiting for another build of the same root filesystem", "lock", path)
	})
}

// LockEntry takes an exclusive lock, across processes, named after r's entry and purpose (a
// lower-case word): what another package does with a tree once (an engine import) is serialised
// with it. Distinct from the build lock: holding it while Get builds the tree is allowed.
func (c *Cache) LockEntry(ctx context.Context, r Recipe, purpose string) (unlock func(), err error) {
	if !dbmsName.MatchString(purpose) {
		return nil, fmt.Errorf("rootfs: lock purpose %q is not a plain word", purpose)
	}
	root, name, err := c.entry(r)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("rootfs cache: %w", err)
	}
	path := filepath.Join(root, name+"."+purpose+".lock")
	return flock.Lock(ctx, path, func() { c.log().Info("waiting for another process", "lock", path) })
}

// tryLock takes name's lock only when nobody holds it (ok false: someone does).
func tryLock(root, name string) (unlock func(), ok bool, err error) {
	return flock.TryLock(filepath.Join(root, name+".lock"))
}

// removeStale removes what dead builds and removals of entry name left, and the entry itself
// when it is not a valid tree (withEntry). The caller holds name's lock.
func (c *Cache) removeStale(ctx context.Context, root, name string, withEntry bool) error {
	left, _ := filepath.Glob(filepath.Join(root, tmpPrefix+"*-"+name+"-*"))
	if withEntry {
		if _, err := os.Lstat(filepath.Join(root, name)); err == nil {
			left = append(left, filepath.Join(root, name))
		}
	}
	for _, dir := range left {
		c.log().Info("removing an unfinished root filesystem", "dir", dir)
		if err := removeDir(ctx, dir, true); err != nil {
			return err
		}
	}
	return nil
}

// List returns the cache's published trees, by dbms then hash. A missing root is an empty cache.
func (c *Cache) List() ([]Tree, error) {
	root, err := c.root()
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("list root filesystems: %w", err)
	}
	var out []Tree
	for _, e := range ents {
		if !e.IsDir() || !entry.MatchString(e.Name()) {
			continue
		}
		t, err := load(filepath.Join(root, e.Name()), "")
		if err != nil {
			c.log().Debug("skipping a cache entry", "err", err) // Get replaces it when it is needed
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].DBMS+out[i].Hash < out[j].DBMS+out[j].Hash })
	return out, nil
}

// Prune removes every tree keep rejects, and the work directories of dead builds, and returns
// the directories removed. A tree being built or removed elsewhere is left alone. Prune must
// not run while boxes use the trees it removes (an overlay over a removed tree breaks); a tree
// with something mounted under it is refused.
func (c *Cache) Prune(ctx context.Context, keep func(Tree) bool) ([]string, error) {
	root, err := c.root()
	if err != nil {
		return nil, err
	}
	trees, err := c.List()
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, t := range trees {
		if keep(t) {
			continue
		}
		name := filepath.Base(filepath.Dir(t.Dir))
		if err := c.removeEntry(ctx, root, name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, filepath.Dir(t.Dir))
	}
	stale, _ := filepath.Glob(filepath.Join(root, tmpPrefix+"*"))
	for _, dir := range stale {
		name := staleEntry(filepath.Base(dir))
		if name == "" {
			continue
		}
		unlock, ok, err := tryLock(root, name)
		if err != nil || !ok {
			continue // being built right now
		}
		if err := removeDir(ctx, dir, true); err != nil {
			errs = append(errs, err)
		} else {
			removed = append(removed, dir)
		}
		unlock()
	}
	return removed, errors.Join(errs...)
}

// Remove removes the tree whose recipe hash is hash (64 hex digits).
func (c *Cache) Remove(ctx context.Context, hash string) error {
	if !fullHash.MatchString(hash) {
		return fmt.Errorf("rootfs: %q is not a recipe hash", hash)
	}
	removed, err := c.Prune(ctx, func(t Tree) bool { return t.Hash != hash })
	if err == nil && len(removed) == 0 {
		err = fmt.Errorf("remove %.16s: %w", hash, ErrNotBuilt)
	}
	return err
}

// removeEntry unpublishes root/name with one rename (Find never sees half a tree), then deletes.
func (c *Cache) removeEntry(ctx context.Context, root, name string) error {
	unlock, err := c.lock(ctx, root, name)
	if err != nil {
		return err
	}
	defer unlock()
	dir := filepath.Join(root, name)
	if m := mountsUnder(dir); len(m) > 0 {
		return fmt.Errorf("not removing %s: %v mounted under it", dir, m)
	}
	gone := filepath.Join(root, fmt.Sprintf("%sremove-%s-%d", tmpPrefix, name, time.Now().UnixNano()))
	if err := os.Rename(dir, gone); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return removeDir(ctx, gone, false)
}

// staleEntry returns the entry name of a work directory ".boxbench-<verb>-<entry>-<suffix>".
func staleEntry(base string) string {
	rest, ok := strings.CutPrefix(base, tmpPrefix)
	if !ok {
		return ""
	}
	_, rest, _ = strings.Cut(rest, "-")               // verb
	if i := strings.LastIndexByte(rest, '-'); i > 0 { // random suffix
		rest = rest[:i]
	}
	if !entry.MatchString(rest) {
		return ""
	}
	return rest
}
