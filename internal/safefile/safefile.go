// Package safefile reads a file named by input boxbench does not trust (a spec) the way ssh,
// git and kubectl treat configuration they did not write: only a regular file, never a FIFO,
// a device or a socket (opened non-blocking, so naming one cannot hang boxbench, and checked
// on the descriptor it reads, so a swap between check and read changes nothing), never
// through a symbolic link when asked, no larger than a cap (checked before and while
// reading), and — when owners are given — owned by one of them and not writable by group or
// others, in directories that only they can change (sticky ones such as /tmp excepted).
//
// Layer (docs/architecture.md): a leaf — it imports no other package of boxbench, so any
// package may import it.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Rule says what a file must be to be read.
type Rule struct {
	// Max is the largest size read, in bytes (required).
	Max int64
	// NoFollow refuses a path whose last component is a symbolic link.
	NoFollow bool
	// Owners, when not empty, are the uids the file and its directories may belong to; the
	// file and each directory must then also be unwritable by group and others (a sticky
	// directory may be writable by all).
	Owners []uint32
}

// Read returns the contents of path if it satisfies r; the error says which rule it broke.
func Read(path string, r Rule) ([]byte, error) {
	if r.Max <= 0 {
		return nil, errors.New("safefile: no size cap")
	}
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	if r.NoFollow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(path, flags, 0)
	if errors.Is(err, unix.ELOOP) && r.NoFollow {
		return nil, fmt.Errorf("%s is a symbolic link (valid: the path of the file itself)", path)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is %s, not a regular file (valid: a regular file)", path, kind(st.Mode))
	}
	if st.Size > r.Max {
		return nil, fmt.Errorf("%s is %d bytes, larger than the %d this file may have", path, st.Size, r.Max)
	}
	if len(r.Owners) > 0 {
		if err := owned(path, st.Uid, st.Mode, r.Owners, false); err != nil {
			return nil, err
		}
		if err := dirsOwned(filepath.Dir(path), r.Owners); err != nil {
			return nil, err
		}
	}
	// A regular file is never a blocking read; clear O_NONBLOCK anyway for filesystems that
	// might honour it, and read at most Max+1 bytes (the file may grow after the fstat).
	_ = unix.SetNonblock(fd, false)
	data, err := io.ReadAll(io.LimitReader(f, r.Max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > r.Max {
		return nil, fmt.Errorf("%s grew beyond the %d bytes this file may have", path, r.Max)
	}
	return data, nil
}

// Kind names what a file of mode is, for a message that refuses it ("a FIFO (a named pipe)").
func Kind(mode uint32) string { return kind(mode) }

func kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO (a named pipe)"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return "not a regular file"
}

// owned checks one file or directory's owner and mode.
func owned(path string, uid, mode uint32, owners []uint32, dir bool) error {
	ok := false
	for _, o := range owners {
		ok = ok || uid == o
	}
	if !ok {
		return fmt.Errorf("%s is owned by uid %d, not by root or the user running boxbench (valid: a file of your own; fix: copy it and name the copy)", path, uid)
	}
	sticky := mode&unix.S_ISVTX != 0
	if mode&0o022 != 0 && !(dir && sticky) {
		return fmt.Errorf("%s has mode %04o: writable by group or others (fix: chmod go-w %s)", path, mode&0o7777, strconv.Quote(path))
	}
	return nil
}

// dirsOwned checks dir and each of its parents.
func dirsOwned(dir string, owners []uint32) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := abs; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no owner information", p)
		}
		if err := owned(p, st.Uid, st.Mode, owners, true); err != nil {
			return err
		}
		if p == "/" {
			return nil
		}
	}
}

// InvokingUsers are the uids whose files count as the user's own: root, this process's
// effective uid and, under sudo, the user who ran sudo (SUDO_UID).
func InvokingUsers() []uint32 {
	us := []uint32{0, uint32(os.Geteuid())}
	if s := os.Getenv("SUDO_UID"); s != "" {
		if u, err := strconv.ParseUint(s, 10, 32); err == nil {
			us = append(us, uint32(u))
		}
	}
	return us
}
