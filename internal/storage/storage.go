// Package storage prepares the host side of a box's data directory: a plain directory (bind),
// a tmpfs mount, or a dedicated filesystem on a loop device or a named device (blockdev), and
// restores a seed data directory into it. Native boxes use the directory directly; container
// boxes bind-mount it, so both sides are created the same way on the same filesystem.
//
// Layer (docs/architecture.md): OS plumbing — it talks to the host and imports only leaves and
// plumbing (internal/command); the spec and everything above may import it.
package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/boxbench/boxbench/internal/command"
)

// Kinds of host-side storage.
const (
	Bind     = "bind"
	Tmpfs    = "tmpfs"
	Blockdev = "blockdev"
)

// Defaults for sizes the spec leaves open.
const (
	DefaultBlockdevSize int64 = 8 << 30
	DefaultTmpfsSize    int64 = 4 << 30
)

// Options choose filesystem and sizes.
type Options struct {
	FS     string // blockdev filesystem: "ext4" (default) or "xfs"
	Size   int64  // blockdev loop file or tmpfs size in bytes
	Device string // blockdev on this device instead of a loop file (it is reformatted)
	// Wipe agrees to lose a signature (filesystem, RAID member, partition table) found on
	// Device; without it such a device is refused (spec: storageOptions.blockdev.wipe).
	Wipe bool
	// Protect are paths whose devices must never be formatted: the work root and the results
	// directory. "/" and the box directory are always protected.
	Protect []string
	// Within, for Bind, puts the data directory in this existing directory (another box's
	// storage root, so that both share its file system and journal) instead of under dir. The
	// directory Prepare makes there is its own: Release removes it.
	Within string
}

// Dir is a prepared host directory. Release is idempotent.
type Dir struct {
	Path  string            // the directory the data goes into
	Facts map[string]string // backing, filesystem, mount options, device

	mu   sync.Mutex
	undo []func(context.Context) error
}

// Prepare creates the storage of kind under dir (dir/data; a loop file goes to
// dir/boxbench-disk.img). The name "boxbench" in mount sources and file names lets cleanup
// and the user recognise them.
func Prepare(ctx context.Context, kind, dir string, o Options) (*Dir, error) {
	if kind == Bind && o.Within != "" {
		return prepareWithin(dir, o.Within)
	}
	d := &Dir{Path: filepath.Join(dir, "data"), Facts: map[string]string{"storage": kind}}
	if err := os.MkdirAll(d.Path, 0o755); err != nil {
		return nil, err
	}
	var err error
	switch kind {
	case Bind:
		err = nil
	case Tmpfs:
		err = d.mountTmpfs(ctx, o)
	case Blockdev:
		err = d.mountBlockdev(ctx, dir, o)
	default:
		err = fmt.Errorf("storage %q is not a host-side storage (valid: bind, tmpfs, blockdev)", kind)
	}
	if err != nil {
		// Undo even when ctx was cancelled (Ctrl-C): a loop device must never leak.
		return nil, errors.Join(err, d.Release(context.WithoutCancel(ctx)))
	}
	d.Facts["mount"] = describeMount(d.Path)
	return d, nil
}

// prepareWithin makes the data directory <within>/<base of dir>, which must not exist: within
// must be an absolute path to a directory, not a link (it is another box's storage root, which
// the caller chose); Release removes what it made.
func prepareWithin(dir, within string) (*Dir, error) {
	if !filepath.IsAbs(within) || filepath.Clean(within) != within {
		return nil, fmt.Errorf("storage within %q: not a clean absolute path", within)
	}
	fi, err := os.Lstat(within)
	if err != nil {
		return nil, fmt.Errorf("storage within: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("storage within %s: not a directory (%s)", within, fi.Mode().Type())
	}
	d := &Dir{Path: filepath.Join(within, filepath.Base(dir)), Facts: map[string]string{"storage": Bind, "within": within}}
	if err := os.Mkdir(d.Path, 0o755); err != nil {
		return nil, fmt.Errorf("storage within: %w", err)
	}
	d.push(func(context.Context) error { return os.RemoveAll(d.Path) })
	d.Facts["mount"] = describeMount(d.Path)
	return d, nil
}

func (d *Dir) mountTmpfs(ctx context.Context, o Options) error {
	size := o.Size
	if size <= 0 {
		size = DefaultTmpfsSize
	}
	opts := "size=" + strconv.FormatInt(size, 10) + ",mode=0755"
	if _, err := command.Run(ctx, "mount", "-t", "tmpfs", "-o", opts, "boxbench-tmpfs", d.Path); err != nil {
		return fmt.Errorf("mount tmpfs: %w", err)
	}
	d.push(func(ctx context.Context) error { return unmount(ctx, d.Path) })
	d.Facts["backing"] = "tmpfs"
	return nil
}

func (d *Dir) mountBlockdev(ctx context.Context, dir string, o Options) error {
	fs := o.FS
	if fs == "" {
		fs = "ext4"
	}
	dev := o.Device
	if dev == "" {
		size := o.Size
		if size <= 0 {
			size = DefaultBlockdevSize
		}
		img := filepath.Join(dir, "boxbench-disk.img")
		f, err := os.Create(img)
		if err != nil {
			return err
		}
		err = f.Truncate(size)
		f.Close()
		if err != nil {
			return err
		}
		d.push(func(context.Context) error { return os.Remove(img) })
		out, err := command.Run(ctx, "losetup", "--find", "--show", img)
		if err != nil {
			return fmt.Errorf("attach loop device: %w", err)
		}
		dev = strings.TrimSpace(string(out))
		d.push(func(ctx context.Context) error { return detachLoop(ctx, dev, dir) })
		d.Facts["backing"] = "loop device over a file on the host filesystem (two journals: not a dedicated disk)"
		d.Facts["loop_file"] = img
	} else {
		// Every check before anything is written: a wrong device name must never be formatted.
		chk, err := CheckDevice(ctx, dev, append([]string{dir}, o.Protect...), o.Wipe)
		if err != nil {
			return err
		}
		dev = chk.Real
		if chk.Signature != "" {
			if _, err := command.Run(ctx, "wipefs", "--all", dev); err != nil {
				return fmt.Errorf("erase the signature on %s (wipe: true): %w", dev, err)
			}
		}
		maps.Copy(d.Facts, chk.facts())
		d.Facts["backing"] = "device " + chk.Path
	}
	d.Facts["device"] = dev
	mkfs := []string{"mkfs.ext4", "-q", "-F", "-L", "boxbench", dev}
	if fs == "xfs" {
		mkfs = []string{"mkfs.xfs", "-q", "-f", "-L", "boxbench", dev}
	}
	if _, err := command.Run(ctx, mkfs...); err != nil {
		return fmt.Errorf("make filesystem: %w", err)
	}
	d.Facts["mkfs"] = strings.Join(mkfs, " ")
	d.Facts["fs"] = fs
	if _, err := command.Run(ctx, "mount", "-t", fs, dev, d.Path); err != nil {
		return fmt.Errorf("mount %s: %w", dev, err)
	}
	d.push(func(ctx context.Context) error { return unmount(ctx, d.Path) })
	return nil
}

func (d *Dir) push(f func(context.Context) error) {
	d.mu.Lock()
	d.undo = append(d.undo, f)
	d.mu.Unlock()
}

// Release unmounts and detaches what Prepare set up, newest first. The directory itself is
// left for the caller (its box) to remove.
func (d *Dir) Release(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for i := len(d.undo) - 1; i >= 0; i-- {
		if err := d.undo[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	d.undo = nil
	return errors.Join(errs...)
}

func unmount(ctx context.Context, path string) error {
	if !IsMountPoint(path) {
		return nil
	}
	if _, err := command.Run(ctx, "umount", path); err != nil {
		// A busy mount (a process still inside) is detached lazily rather than leaked.
		if _, err2 := command.Run(ctx, "umount", "-l", path); err2 != nil {
			return fmt.Errorf("unmount %s: %w", path, err)
		}
	}
	return nil
}

// detachLoop detaches loop device dev, which boxbench made under root, and waits until the
// kernel has let it go (waitDetached).
func detachLoop(ctx context.Context, dev, root string) error {
	if _, err := command.Run(ctx, "losetup", "-d", dev); err != nil {
		return fmt.Errorf("detach %s: %w", dev, err)
	}
	return waitDetached(ctx, dev, root, detachWait)
}

// detachWait bounds how long a detached loop device may stay attached. losetup -d on a device
// still in use only marks it for release when its last user lets go: a copy of the mount in a
// mount namespace cloned while it was mounted (released below when the device is boxbench's
// own), or an open file, or a dying container's namespace that the kernel is tearing down on a
// loaded host (seconds, not minutes).
const detachWait = 60 * time.Second

// releaseEvery is how often waitDetached looks for holders and releases copies of the mount.
const releaseEvery = time.Second

// waitDetached waits until the kernel has let go of loop device dev. Meanwhile, when dev is
// boxbench's own (isOwnLoop under root), it unmounts the copies of its filesystem that other
// mount namespaces hold (releaseCopies); it never signals a process. When dev is still
// attached after limit, the error names every holder it found (pid, command, what).
func waitDetached(ctx context.Context, dev, root string, limit time.Duration) error {
	backing := filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file")
	majmin, _ := devNumber(dev)
	own := isOwnLoop(ctx, dev, root)
	deadline := time.Now().Add(limit)
	next := time.Now().Add(100 * time.Millisecond) // the usual case needs no scan at all
	for {
		if _, err := os.Stat(backing); err != nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			b, _ := os.ReadFile(backing)
			var names []string
			for _, h := range holdersOf(majmin, root) {
				names = append(names, h.String())
			}
			held := "no holder found (a dying mount namespace, or a namespace kept open without a process)"
			if len(names) > 0 {
				held = "held by " + strings.Join(names, "; ")
			}
			return fmt.Errorf("loop device %s (%s) is still in use %s after losetup -d: %s",
				dev, strings.TrimSpace(string(b)), limit, held)
		}
		if own && time.Now().After(next) {
			releaseCopies(ctx, holdersOf(majmin, root))
			next = time.Now().Add(releaseEvery)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Capture copies a stopped data directory src from the host side of its storage into the host
// directory dst, which it creates (what a box's Capture does when the host can see its data).
func Capture(ctx context.Context, src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	_, err := Restore(ctx, src, dst)
	return err
}

// Restore copies the seed data directory's contents into dst, preferring a reflink (a
// copy-on-write clone) where the filesystem allows it. It returns "reflink" or "copy".
func Restore(ctx context.Context, seed, dst string) (string, error) {
	if _, err := command.Run(ctx, "cp", "-a", "--reflink=always", seed+"/.", dst+"/"); err == nil {
		return "reflink", nil
	}
	if _, err := command.Run(ctx, "cp", "-a", "--reflink=never", seed+"/.", dst+"/"); err != nil {
		return "", fmt.Errorf("restore data directory: %w", err)
	}
	return "copy", nil
}
