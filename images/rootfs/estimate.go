package rootfs

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/prereq"
)

// Typical build times of a tree on a 2-vCPU host (docs/ci.md, "Figures": the Debian base
// 250–361 s, then a database's packages on a copy of it, 30 s to 3 min at once), for an
// estimate where the cache holds no record of its own.
const (
	typicalWithBase = 5 * time.Minute // the Debian base is not cached: debootstrap first
	typicalOnBase   = time.Minute     // a copy of the cached base and the database's packages
)

// Need is the prerequisite "dbms's root filesystem is not built", made by command.
func (c *Cache) Need(dbms, command string) prereq.Need {
	takes, basis := c.Estimate(dbms)
	return prereq.Need{What: dbms + "'s root filesystem is not built", Command: command, Takes: takes, Basis: basis}
}

// Estimate is how long building dbms's tree should take here, and where the figure comes
// from: the last recorded build of a tree of dbms in this cache (another recipe's: an older
// version of its packages), else a typical figure on a 2-vCPU host, shorter when the
// Debian base is cached.
func (c *Cache) Estimate(dbms string) (time.Duration, string) {
	trees, _ := c.List()
	var last *Tree
	for i, t := range trees {
		if t.DBMS == dbms && t.BuildSeconds > 0 && (last == nil || c.newer(t, *last)) {
			last = &trees[i]
		}
	}
	if last != nil {
		d := time.Duration(last.BuildSeconds * float64(time.Second))
		return d, "its last build here took " + prereq.About(d)
	}
	if c.baseCached() {
		return typicalOnBase, prereq.Typical + ", the Debian base cached"
	}
	return typicalWithBase, prereq.Typical + ", the Debian base included"
}

// newer says whether a's entry was published after b's.
func (c *Cache) newer(a, b Tree) bool {
	ma, ea := mtime(filepath.Dir(a.Dir))
	mb, eb := mtime(filepath.Dir(b.Dir))
	return ea == nil && (eb != nil || ma.After(mb))
}

func mtime(p string) (time.Time, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

// baseCached says whether the cache holds a published Debian base (of any inputs: the estimate
// needs no more).
func (c *Cache) baseCached() bool {
	root, err := c.root()
	if err != nil {
		return false
	}
	ents, _ := os.ReadDir(filepath.Join(root, basesDir))
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), tmpPrefix) {
			return true
		}
	}
	return false
}
