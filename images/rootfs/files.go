package rootfs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// fileHashes caches the sha256 of a host file by path, size and modification time: a recipe is
// computed at every lookup and a built server is tens of MiB.
var fileHashes sync.Map // fileKey → string

type fileKey struct {
	path  string
	size  int64
	mtime int64
}

// fileHash is the hex sha256 of the regular file at path.
func fileHash(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	k := fileKey{path, fi.Size(), fi.ModTime().UnixNano()}
	if v, ok := fileHashes.Load(k); ok {
		return v.(string), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	fileHashes.Store(k, sum)
	return sum, nil
}

// copyFiles copies the recipe's files from the host into the tree at dir, at the same paths,
// executable, and checks that what was copied has the recipe's sha256 (the host file may have
// changed since the recipe was made).
func copyFiles(r Recipe, dir string) error {
	for p, want := range r.Files {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.Contains(p, "..") {
			return fmt.Errorf("rootfs: file %q is not a clean absolute path", p)
		}
		if err := copyFile(p, filepath.Join(dir, p), want); err != nil {
			return fmt.Errorf("rootfs: copy %s into the tree: %w", p, err)
		}
	}
	return nil
}

func copyFile(src, dst, want string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("sha256 %s, the recipe says %s (rebuilt while the image was built?)", got, want)
	}
	return nil
}
