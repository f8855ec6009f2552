// Package ownfs creates and opens what boxbench writes, relative to a directory descriptor, so
// that no symbolic link it did not create is ever followed: each name is opened with openat2
// (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS) where the kernel has it and with
// openat(O_NOFOLLOW) where it does not (ENOSYS). Names are single path components, so the two
// are equivalent: neither walks through a link, neither leaves the directory. A directory's
// missing components are made with mkdirat, one at a time, and each is opened the same way
// before the next is made under it.
//
// Layer (docs/architecture.md): OS plumbing — it talks to the host and imports only leaves
// (internal/safefile); the spec and everything above may import it.
package ownfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/safefile"
)

// openat2 is the system call, a variable so that a test can take the fallback (ENOSYS).
var openat2 = unix.Openat2

// Dir is an open directory and the path it was opened by (for messages). Its methods are safe
// for concurrent use; Close ends them.
type Dir struct {
	fd   int
	path string
}

// Path is the path the directory was opened by.
func (d *Dir) Path() string { return d.path }

// Fd is the directory's descriptor, valid until Close.
func (d *Dir) Fd() int { return d.fd }

// Close closes the descriptor.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// Join is the path of name in d, for messages.
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

// ProcPath names name in d through the descriptor (/proc/self/fd/N/name): for a library that
// opens by path (SQLite). The kernel resolves the /proc link to the directory itself, whatever
// was renamed or planted on the way to it since; name, its last component, is resolved by that
// library's open — the caller checks it before and after (results.openVerified).
func (d *Dir) ProcPath(name string) string {
	return "/proc/self/fd/" + strconv.Itoa(d.fd) + "/" + name
}

// RealPath is where the directory is now, as the kernel names it (the /proc link of its
// descriptor): what a library given ProcPath resolves it to.
func (d *Dir) RealPath() (string, error) {
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(d.fd))
}

// OpenDir opens the existing directory path as the operator named it (links on the way are
// followed: this is for reading and for a directory such as --html's, named by whoever runs
// boxbench). It never blocks: a FIFO is refused, not opened.
func OpenDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open directory", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: path}, nil
}

// oneName refuses a name that is not a single component: every walk here is one name at a time.
func oneName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') || strings.ContainsRune(name, 0) {
		return fmt.Errorf("ownfs: %q is not a single file name", name)
	}
	return nil
}

// openat opens name in dirfd without following a symbolic link and without leaving dirfd.
// flags gain O_CLOEXEC and O_NOFOLLOW; perm is used only with O_CREAT.
func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	if err := oneName(name); err != nil {
		return -1, err
	}
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW
	how := unix.OpenHow{Flags: uint64(flags),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(perm)
	}
	for {
		fd, err := openat2(dirfd, name, &how)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue // openat2 may ask for a retry (a rename raced the lookup)
		case errors.Is(err, unix.ENOSYS):
			return unix.Openat(dirfd, name, flags, perm)
		}
		return fd, err
	}
}

// Lstat returns name's status without following it; exists is false when there is no name.
func (d *Dir) Lstat(name string) (st unix.Stat_t, exists bool, err error) {
	if err := oneName(name); err != nil {
		return st, false, err
	}
	err = unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return st, false, nil
	}
	if err != nil {
		return st, false, &os.PathError{Op: "stat", Path: d.Join(name), Err: err}
	}
	return st, true, nil
}

// NotRegular says what name is when it exists and is not a regular file ("" otherwise): a
// symbolic link, a FIFO, a device, a socket, a directory.
func (d *Dir) NotRegular(name string) (string, error) {
	st, ok, err := d.Lstat(name)
	if err != nil || !ok || st.Mode&unix.S_IFMT == unix.S_IFREG {
		return "", err
	}
	return safefile.Kind(st.Mode), nil
}

// OpenRegular opens the existing regular file name with flags (O_RDONLY or O_RDWR): a link, a
// FIFO, a device or a directory is refused before it is opened (lstat), and the descriptor is
// checked again (fstat) — opened with O_NONBLOCK, so a FIFO swapped in between cannot block.
func (d *Dir) OpenRegular(name string, flags int) (*os.File, error) {
	if what, err := d.NotRegular(name); err != nil || what != "" {
		if err == nil {
			err = fmt.Errorf("%s is %s, not a regular file; it was not opened (valid: a regular file)", d.Join(name), what)
		}
		return nil, err
	}
	fd, err := openat(d.fd, name, flags|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, d.openError(name, err)
	}
	f := os.NewFile(uintptr(fd), d.Join(name))
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("%s is %s, not a regular file (valid: a regular file)", d.Join(name), safefile.Kind(st.Mode))
	}
	_ = unix.SetNonblock(fd, false)
	return f, nil
}

// Create makes the new file name (O_EXCL: an existing name, a link among them, is an error).
func (d *Dir) Create(name string, perm uint32) (*os.File, error) {
	fd, err := openat(d.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, perm)
	if err != nil {
		return nil, d.openError(name, err)
	}
	return os.NewFile(uintptr(fd), d.Join(name)), nil
}

// OpenOrCreate opens the regular file name read-write, creating it when absent; a name that
// is anything but a regular file is refused.
func (d *Dir) OpenOrCreate(name string, perm uint32) (*os.File, error) {
	if what, err := d.NotRegular(name); err != nil || what != "" {
		if err == nil {
			err = fmt.Errorf("%s is %s, not a regular file; it was left as it is", d.Join(name), what)
		}
		return nil, err
	}
	fd, err := openat(d.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_NONBLOCK|unix.O_NOCTTY, perm)
	if err != nil {
		return nil, d.openError(name, err)
	}
	f := os.NewFile(uintptr(fd), d.Join(name))
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file; it was left as it is", d.Join(name))
	}
	_ = unix.SetNonblock(fd, false)
	return f, nil
}

func (d *Dir) openError(name string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return fmt.Errorf("%s is a symbolic link; boxbench does not follow it (valid: the file itself)", d.Join(name))
	}
	return &os.PathError{Op: "open", Path: d.Join(name), Err: err}
}

// Names lists the directory's entries.
func (d *Dir) Names() ([]string, error) {
	// A duplicate shares the offset, which only this reading uses (every other call is *at).
	fd, err := unix.Dup(d.fd)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	return f.Readdirnames(-1)
}

// Stat is the directory's own status.
func (d *Dir) Stat() (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstat(d.fd, &st)
	return st, err
}

// Remove removes the file name (not a directory) from d.
func (d *Dir) Remove(name string) error {
	if err := oneName(name); err != nil {
		return err
	}
	return unix.Unlinkat(d.fd, name, 0)
}

// WriteAtomic writes name whole: into a new temporary file of a random name in d (O_EXCL, so
// nothing planted at that name is written through), synced, then renamed over name (rename
// replaces a name, it never follows one). An existing name that is not a regular file — a
// symbolic link planted at it among them — is refused and left as it is. On error the
// temporary file is removed.
func (d *Dir) WriteAtomic(name string, perm uint32, write func(*os.File) error) error {
	if what, err := d.NotRegular(name); err != nil || what != "" {
		if err == nil {
			err = fmt.Errorf("%s is %s, not a regular file; it was left as it is and nothing was written (valid: a new name or a regular file to replace)", d.Join(name), what)
		}
		return err
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	tmp := "." + name + ".tmp-" + hex.EncodeToString(b[:])
	f, err := d.Create(tmp, perm)
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(d.fd, tmp, d.fd, name)
	}
	if err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return err
	}
	return nil
}
