package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/boxbench/boxbench/internal/ownfs"
)

// CheckWorkRoot creates the work root when it is absent (mode 0755) and refuses one that a
// user other than root could change: boxbench, as root, removes directories, mounts and
// formats loop files under it, and restores seeds from it. The work root must be a directory
// owned by root (or by the user boxbench runs as: trustedOwner) and not writable by group or
// others; so must each of its parents, except that a sticky directory (/tmp, /var/tmp) may be
// writable by all. The error says how to fix it.
func CheckWorkRoot(dir string) error {
	if slices.Contains(strings.Split(dir, "/"), "..") {
		return fmt.Errorf("refusing work root %s: it has a \"..\" component, whose meaning depends on links on the way (valid: a path without one)", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	// Checked before anything is made: boxbench creates seeds/ and locks/ in it and removes
	// experiments' directories under it.
	for _, p := range []string{abs, resolveExisting(abs)} {
		if sys, ok := ownfs.SystemDir(p); ok {
			return fmt.Errorf("refusing work root %s: %s is the system directory %s or inside it (valid: a directory of boxbench's own, e.g. /var/tmp/boxbench)", dir, p, sys)
		}
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("work root %s: %w", abs, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("work root %s: %w", abs, err)
	}
	var problems []error
	for p := real; ; p = filepath.Dir(p) {
		if err := checkOwner(p, p == real); err != nil {
			problems = append(problems, err)
		}
		if p == "/" {
			break
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("refusing work root %s: a user other than root could change what boxbench removes, mounts and restores as root: %w",
			dir, errors.Join(problems...))
	}
	return nil
}

// resolveExisting is abs with the links of its longest existing prefix resolved: where
// MkdirAll would create what is missing.
func resolveExisting(abs string) string {
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if p == "/" {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// checkOwner checks one directory of the work root's path.
func checkOwner(p string, isRoot bool) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: no owner information", p)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", p)
	}
	if !trustedOwner(st.Uid) {
		return fmt.Errorf("%s is owned by uid %d (fix: chown root:root %q)", p, st.Uid, p)
	}
	perm := fi.Mode().Perm()
	sticky := fi.Mode()&os.ModeSticky != 0
	if perm&0o022 != 0 && (isRoot || !sticky) {
		return fmt.Errorf("%s has mode %v, writable by group or others (fix: chmod go-w %q)", p, perm, p)
	}
	return nil
}

// trustedOwner says whether files owned by uid can be trusted: root's, and this process's own
// user's (no one else can change what boxbench run by that user removes or restores; boxbench
// as root trusts root alone, as before; a test of the runner on a fake platform runs as any
// user).
func trustedOwner(uid uint32) bool { return uid == 0 || int(uid) == os.Geteuid() }
