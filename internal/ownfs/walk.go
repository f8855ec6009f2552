package ownfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/safefile"
)

// Target is a directory to be made or opened, as Resolve found it before anything changed.
type Target struct {
	// Path is the directory as named, absolute.
	Path string
	// Resolved is Path with the links of its existing part resolved: where it really is.
	Resolved string
	// Existing is the part of Resolved that exists; Missing are the components to make under it.
	Existing string
	Missing  []string
}

// DotDot says why a path with a ".." component is refused: the kernel resolves ".." after the
// component before it, so "a/ghost/../d" would make a/ghost, and a directory before a ".." may
// be a link that takes ".." somewhere else than the text says.
func DotDot(path string) error {
	for _, c := range strings.Split(path, "/") {
		if c == ".." {
			return fmt.Errorf("%s has a \"..\" component: the directory before it would be made (or followed, if it is a link) before \"..\" is resolved (valid: a path without \"..\"; write the directory it means)", path)
		}
	}
	return nil
}

// Resolve looks at path without changing anything: it refuses a ".." component and a last
// component that is a symbolic link or not a directory, and says where the directory is
// (links among its existing parents resolved) and what is missing of it.
func Resolve(path string) (Target, error) {
	if path == "" {
		return Target{}, errors.New("empty directory path")
	}
	if err := DotDot(path); err != nil {
		return Target{}, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Target{}, err
	}
	t := Target{Path: abs}
	existing := abs
	for {
		fi, err := os.Lstat(existing)
		if err == nil {
			if existing == abs && fi.Mode()&os.ModeSymlink != 0 {
				to, _ := os.Readlink(abs)
				return t, fmt.Errorf("%s is a symbolic link (to %s); boxbench does not follow it (valid: the directory itself)", abs, to)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return t, err
		}
		t.Missing = append([]string{filepath.Base(existing)}, t.Missing...)
		existing = filepath.Dir(existing)
	}
	if t.Existing, err = filepath.EvalSymlinks(existing); err != nil {
		return t, err
	}
	fi, err := os.Stat(t.Existing)
	if err != nil {
		return t, err
	}
	if !fi.IsDir() {
		return t, fmt.Errorf("%s is %s, not a directory", existing, kindOf(fi))
	}
	t.Resolved = filepath.Join(append([]string{t.Existing}, t.Missing...)...)
	return t, nil
}

func kindOf(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*unix.Stat_t); ok {
		return safefile.Kind(st.Mode)
	}
	return "not a directory"
}

// Open opens t's existing part, walking from / one component at a time without following a
// link (Resolved has none; one planted since Resolve is refused), then makes each missing
// component with mkdirat (perm) and opens it the same way before making the next under it.
// A component that is a link, or not a directory, is refused.
func (t Target) Open(perm uint32) (*Dir, error) {
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	d := &Dir{fd: fd, path: "/"}
	for _, c := range strings.Split(strings.TrimPrefix(t.Existing, "/"), "/") {
		if c == "" {
			continue
		}
		if d, err = d.sub(c, false, perm); err != nil {
			return nil, err
		}
	}
	for _, c := range t.Missing {
		if d, err = d.sub(c, true, perm); err != nil {
			return nil, err
		}
	}
	d.path = t.Path
	return d, nil
}

// sub opens the directory name under d (making it first when mk), and closes d.
func (d *Dir) sub(name string, mk bool, perm uint32) (*Dir, error) {
	defer d.Close()
	path := filepath.Join(d.path, name)
	if mk {
		if err := unix.Mkdirat(d.fd, name, perm); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, &os.PathError{Op: "mkdir", Path: path, Err: err}
		}
	}
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.EACCES) {
		// A parent one may search but not list (mode --x): O_PATH is enough to walk on.
		fd, err = openat(d.fd, name, unix.O_PATH|unix.O_DIRECTORY, 0)
	}
	if errors.Is(err, unix.ENOTDIR) {
		// O_DIRECTORY is checked before O_NOFOLLOW: say what it is.
		if st, ok, _ := d.Lstat(name); ok && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			err = unix.ELOOP
		}
	}
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return nil, fmt.Errorf("%s is a symbolic link; boxbench does not follow it (valid: a real directory)", path)
	}
	if errors.Is(err, unix.ENOTDIR) {
		return nil, fmt.Errorf("%s is not a directory", path)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open directory", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: path}, nil
}

// MkdirAll makes path (perm) as Target.Open does and returns it open.
func MkdirAll(path string, perm uint32) (*Dir, error) {
	t, err := Resolve(path)
	if err != nil {
		return nil, err
	}
	return t.Open(perm)
}
