// Package tarball streams directory trees to and from tar archives, the format the Docker Engine
// API takes for image imports and container copies. It is written here rather than borrowed
// from the engine's SDK so that ownership is explicit: a root filesystem keeps its numeric
// owners, a data directory copied into a container is owned by the database's user *inside the
// image*, whose uid may differ from the host's.
package tarball

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Owner is a numeric owner forced onto every entry.
type Owner struct{ UID, GID int }

// Writer writes a tar stream. It is not safe for concurrent use.
type Writer struct {
	tw    *tar.Writer
	owner *Owner
	links map[[2]uint64]string // (device, inode) of files with several links -> first name
}

// NewWriter writes to w. With owner set, every entry is owned by it; otherwise entries keep the
// numeric owners of the files on disk (names are never recorded: they mean nothing in another
// root filesystem).
func NewWriter(w io.Writer, owner *Owner) *Writer {
	return &Writer{tw: tar.NewWriter(w), owner: owner, links: map[[2]uint64]string{}}
}

// SetOwner changes the owner forced onto the entries written from now on (nil: keep the files').
func (w *Writer) SetOwner(o *Owner) { w.owner = o }

func (w *Writer) own(h *tar.Header) {
	h.Uname, h.Gname = "", ""
	h.AccessTime, h.ChangeTime = time.Time{}, time.Time{}
	if w.owner != nil {
		h.Uid, h.Gid = w.owner.UID, w.owner.GID
	}
}

// Dir adds a directory entry: its permissions and its sticky bit (a /tmp).
func (w *Writer) Dir(name string, mode fs.FileMode) error {
	perm := int64(mode.Perm())
	if mode&fs.ModeSticky != 0 {
		perm |= 0o1000
	}
	h := &tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimSuffix(name, "/") + "/",
		Mode: perm, ModTime: time.Now()}
	w.own(h)
	return w.tw.WriteHeader(h)
}

// File adds a regular file with the given content.
func (w *Writer) File(name string, mode fs.FileMode, data []byte) error {
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(mode.Perm()),
		Size: int64(len(data)), ModTime: time.Now()}
	w.own(h)
	if err := w.tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := w.tw.Write(data)
	return err
}

// Tree adds the contents of root (not root itself) under prefix ("" for the archive's root).
// Regular files, directories, symbolic and hard links, devices and FIFOs are kept; sockets are
// skipped (they are recreated by their servers).
func (w *Writer) Tree(root, prefix string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		return w.add(p, path.Join(prefix, filepath.ToSlash(rel)))
	})
}

func (w *Writer) add(p, name string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSocket != 0 {
		return nil
	}
	link := ""
	if fi.Mode()&fs.ModeSymlink != 0 {
		if link, err = os.Readlink(p); err != nil {
			return err
		}
	}
	h, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	h.Name = name
	if fi.IsDir() {
		h.Name += "/"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		h.Uid, h.Gid = int(st.Uid), int(st.Gid)
		if fi.Mode().IsRegular() && st.Nlink > 1 {
			key := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
			if first, seen := w.links[key]; seen {
				h.Typeflag, h.Linkname, h.Size = tar.TypeLink, first, 0
			} else {
				w.links[key] = name
			}
		}
	}
	w.own(h)
	if err := w.tw.WriteHeader(h); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if h.Typeflag != tar.TypeReg || h.Size == 0 {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.CopyN(w.tw, f, h.Size); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// Close finishes the archive (it does not close the underlying writer).
func (w *Writer) Close() error { return w.tw.Close() }

// Extract unpacks r into dst, dropping the first strip path components of every name (the
// engine names a copied directory's entries after the directory). Numeric owners, modes and
// modification times are restored; names that would leave dst are refused.
func Extract(r io.Reader, dst string, strip int) error {
	tr := tar.NewReader(r)
	type dirTime struct {
		path string
		t    time.Time
	}
	var dirs []dirTime
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		rel, ok := stripName(h.Name, strip)
		if !ok {
			continue
		}
		target, err := inside(dst, rel)
		if err != nil {
			return err
		}
		if err := noSymlinkBetween(dst, target, h.Typeflag == tar.TypeDir); err != nil {
			return err
		}
		if err := extractOne(tr, h, dst, target, strip); err != nil {
			return fmt.Errorf("extract %s: %w", h.Name, err)
		}
		if h.Typeflag == tar.TypeDir {
			dirs = append(dirs, dirTime{target, h.ModTime})
		}
	}
	// Directory times last: creating their entries changed them.
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Chtimes(dirs[i].path, dirs[i].t, dirs[i].t)
	}
	return nil
}

func stripName(name string, n int) (string, bool) {
	parts := strings.Split(strings.Trim(path.Clean("/"+name), "/"), "/")
	if len(parts) <= n || (len(parts) == 1 && parts[0] == "") {
		return "", n == 0 || len(parts) == n // the stripped directory itself maps to dst
	}
	return path.Join(parts[n:]...), true
}

func inside(dst, rel string) (string, error) {
	t := filepath.Join(dst, filepath.FromSlash(rel))
	if t != filepath.Clean(dst) && !strings.HasPrefix(t, filepath.Clean(dst)+string(filepath.Separator)) {
		return "", fmt.Errorf("archive entry %q leaves %s", rel, dst)
	}
	return t, nil
}

// noSymlinkBetween refuses a target reached through a symbolic link that an earlier entry
// created (inside's lexical check cannot see it), and a directory entry naming an existing
// symbolic link (MkdirAll and Chmod would follow it).
func noSymlinkBetween(dst, target string, isDir bool) error {
	rel, err := filepath.Rel(dst, target)
	if err != nil || rel == "." {
		return err
	}
	parts := strings.Split(rel, string(filepath.Separator))
	p := dst
	for i, part := range parts {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 && (i < len(parts)-1 || isDir) {
			return fmt.Errorf("archive entry %q goes through the symbolic link %s", rel, p)
		}
	}
	return nil
}

func extractOne(tr *tar.Reader, h *tar.Header, dst, target string, strip int) error {
	mode := fs.FileMode(h.Mode).Perm() | fs.FileMode(h.Mode)&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
	switch h.Typeflag {
	case tar.TypeDir:
		if err := os.MkdirAll(target, 0o700); err != nil {
			return err
		}
	case tar.TypeReg:
		_ = os.Remove(target)
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	case tar.TypeSymlink:
		_ = os.Remove(target)
		if err := os.Symlink(h.Linkname, target); err != nil {
			return err
		}
		return os.Lchown(target, h.Uid, h.Gid)
	case tar.TypeLink:
		rel, ok := stripName(h.Linkname, strip)
		if !ok {
			return fmt.Errorf("hard link to %q outside the copied tree", h.Linkname)
		}
		src, err := inside(dst, rel)
		if err != nil {
			return err
		}
		if err := noSymlinkBetween(dst, src, false); err != nil {
			return err
		}
		_ = os.Remove(target)
		return os.Link(src, target)
	default:
		return nil // devices and FIFOs do not occur in data directories
	}
	if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
		return err
	}
	if err := os.Chmod(target, mode); err != nil {
		return err
	}
	return os.Chtimes(target, h.ModTime, h.ModTime)
}
