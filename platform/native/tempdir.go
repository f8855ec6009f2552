package native

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// The socket directory of a native box (runDirFor) is under the system's temporary directory:
// a unix socket path has at most 107 bytes, and the work root is the user's choice, of any
// length. So TMPDIR is something a native box needs, and the server, which runs as its system
// user, must reach: boxbench never creates it (MkdirAll made a missing TMPDIR root's 0700, and
// the server then failed with "bind: Permission denied", naming nothing).

// checkTempDir says why the temporary directory cannot hold a native box's sockets: TMPDIR is
// not absolute, does not exist, is not a directory, or a directory on the way to it cannot be
// searched by other users (the database's system user is one). nil when it can.
func checkTempDir() error {
	dir, name := os.TempDir(), "TMPDIR="+os.Getenv("TMPDIR")
	if os.Getenv("TMPDIR") == "" {
		name = dir + " (TMPDIR unset)"
	}
	const valid = "valid: an existing directory every user can search, such as /tmp; or unset TMPDIR"
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%s is not an absolute path (%s)", name, valid)
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist, and boxbench does not create it: native boxes keep their sockets there (%s)", name, valid)
	case err != nil:
		return fmt.Errorf("%s: %w (%s)", name, err, valid)
	case !fi.IsDir():
		return fmt.Errorf("%s is a %s, not a directory (%s)", name, kind(fi.Mode()), valid)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("%s: %w (%s)", name, err, valid)
	}
	for p := real; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("%s: %w (%s)", name, err, valid)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%s: %s (mode %04o) cannot be searched by other users, so a database server running as its system user cannot reach its socket there (%s; or chmod o+x %s)",
				name, p, fi.Mode().Perm(), valid, p)
		}
		if p == "/" {
			return nil
		}
	}
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsRegular():
		return "regular file"
	}
	return "non-directory (" + m.Type().String() + ")"
}

// makeRunDir creates a box's socket directory in the temporary directory, which must exist
// (checkTempDir). One left by an earlier box of the same work directory is used again only when
// it is a directory, not a symbolic link, owned by boxbench or the database's system user
// owner (whom the provision gives it to): the temporary directory is everyone's.
func makeRunDir(dir, owner string) error {
	if err := checkTempDir(); err != nil {
		return err
	}
	err := os.Mkdir(dir, 0o700)
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	uid := -1
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		uid = int(st.Uid)
	}
	if u, err := user.Lookup(owner); fi.IsDir() && (uid == os.Geteuid() || err == nil && u.Uid == strconv.Itoa(uid)) {
		return nil
	}
	return fmt.Errorf("socket directory %s exists and is not one boxbench made (a %s owned by uid %d): remove it", dir, kind(fi.Mode()), uid)
}
