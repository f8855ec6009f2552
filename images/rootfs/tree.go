package rootfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/boxbench/boxbench/dbms"
)

// Labels a tree carries wherever it is imported (engine image labels today). The names keep the
// values images had before trees were cached, so images built then still match.
const (
	LabelBoxbench      = "boxbench"        // "1"
	LabelDBMS          = "boxbench.dbms"   // dbms name
	LabelInputs        = "boxbench.inputs" // sha256 of the Recipe (hex)
	LabelRecipe        = "boxbench.recipe" // Recipe as JSON
	LabelServerPackage = "boxbench.server.package"
	LabelServerVersion = "boxbench.server.version"
	LabelPackages      = "boxbench.packages" // "name=version …" of every installed package
	LabelUser          = "boxbench.user"     // the account the server runs as
	LabelUID           = "boxbench.uid"      // its numeric uid inside the tree
	LabelGID           = "boxbench.gid"      // its numeric primary gid inside the tree
)

// Tree is a built root filesystem and what it holds.
//
// Trees are shared read-only by every box on the host and by later runs: a platform must never
// write into Dir. It copies the tree (an engine import, a VM disk) or puts a writable layer over
// it (overlayfs with Dir as a lower directory).
type Tree struct {
	Dir             string            `json:"-"` // the root filesystem ("/" of the box)
	Recipe          Recipe            `json:"recipe"`
	Hash            string            `json:"hash"` // Recipe.Hash()
	DBMS            string            `json:"dbms"`
	ServerPackage   string            `json:"server_package"`
	ServerVersion   string            `json:"server_version"`   // "" when the package is missing
	PackageVersions map[string]string `json:"package_versions"` // every installed package → version
	User            string            `json:"user"`             // the server's account
	UID             int               `json:"uid"`              // its ids inside the tree
	GID             int               `json:"gid"`
	// BuildSeconds is how long the build that made the tree took (its Debian base included
	// when that build made the base too); 0 in trees built before it was recorded. The
	// estimate of the next build of the same database reads it (Cache.Estimate).
	BuildSeconds float64 `json:"build_seconds,omitempty"`
}

// Labels are the tree's description as image labels: LabelInputs and LabelDBMS find it again,
// the others say what it holds.
func (t Tree) Labels() map[string]string {
	return map[string]string{
		LabelBoxbench: "1", LabelDBMS: t.DBMS, LabelInputs: t.Hash, LabelRecipe: t.Recipe.JSON(),
		LabelServerPackage: t.ServerPackage, LabelServerVersion: t.ServerVersion,
		LabelPackages: FormatVersions(t.PackageVersions), LabelUser: t.User,
		LabelUID: strconv.Itoa(t.UID), LabelGID: strconv.Itoa(t.GID),
	}
}

// Facts describe the tree for a run's stored environment.
func (t Tree) Facts() map[string]string {
	return map[string]string{"rootfs": t.Dir, "rootfs_inputs": t.Hash, "rootfs_suite": t.Recipe.Suite,
		"rootfs_server_package": t.ServerPackage, "rootfs_server_version": t.ServerVersion}
}

// Size is the disk space the tree takes, in bytes (DiskUsage of Dir).
func (t Tree) Size() (int64, error) { return DiskUsage(t.Dir) }

// DiskUsage is the disk space the files under dir take, in bytes (blocks allocated, hard links
// counted once), as du does.
func DiskUsage(dir string) (int64, error) {
	var total int64
	seen := map[uint64]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			total += fi.Size()
			return nil
		}
		if st.Nlink > 1 && !d.IsDir() {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
		}
		total += st.Blocks * 512 // st_blocks is in 512-byte units whatever the block size
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dir, err)
	}
	return total, nil
}

// readTree records what a freshly built root filesystem holds: package versions from its dpkg
// database and the server account's ids from its passwd file. Every recipe package must be
// installed: a tree without them is a failed build.
func readTree(r Recipe, d dbms.DBMS, dir string) (Tree, error) {
	f, err := os.Open(filepath.Join(dir, "var/lib/dpkg/status"))
	if err != nil {
		return Tree{}, fmt.Errorf("read dpkg status: %w", err)
	}
	versions, err := ParseStatus(f)
	f.Close()
	if err != nil {
		return Tree{}, fmt.Errorf("read dpkg status: %w", err)
	}
	for _, p := range r.Packages {
		if versions[p] == "" {
			return Tree{}, fmt.Errorf("package %s is not installed in the root filesystem", p)
		}
	}
	pw, err := os.Open(filepath.Join(dir, "etc/passwd"))
	if err != nil {
		return Tree{}, fmt.Errorf("read passwd: %w", err)
	}
	uid, gid, err := ParsePasswd(pw, d.User())
	pw.Close()
	if err != nil {
		return Tree{}, fmt.Errorf("root filesystem: %w", err)
	}
	return Tree{Dir: dir, Recipe: r, Hash: r.Hash(), DBMS: r.DBMS, ServerPackage: d.ServerPackage(),
		ServerVersion: versions[d.ServerPackage()], PackageVersions: versions, User: d.User(),
		UID: uid, GID: gid}, nil
}
