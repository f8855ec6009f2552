// Package vmimage builds and caches the guest bases of the VM platform: a database's root
// filesystem tree (package rootfs, the same one the Docker image and the LXC container use) plus
// Debian's kernel, the QEMU guest agent and boxbench's guest init, as an ext4 disk image made
// with mkfs.ext4 -d (no loop mount), with the kernel and initrd beside it.
//
// A base is keyed by the hash of its inputs (the tree's recipe hash, build.sh and the guest
// files), built once under an exclusive lock, in a temporary directory renamed into place when
// complete. Bases are read-only: a box boots a copy-on-write overlay of Disk.
package vmimage

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/internal/cachedir"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/flock"
	"github.com/boxbench/boxbench/internal/prereq"
)

// DefaultRoot is where bases are cached unless the caller says otherwise ($BOXBENCH_CACHE/vm).
var DefaultRoot = cachedir.Path("vm")

// ErrNotBuilt means the cache has no base for the tree's current recipe.
var ErrNotBuilt = errors.New("guest image not built")

//go:embed build.sh
var buildScript []byte

//go:embed all:guest
var guestFiles embed.FS

// Variants of a base.
const (
	Plain  = ""       // the database's tree, booted as the guest itself (platform vm)
	Docker = "docker" // plus dockerd with the database's image loaded (platform vm-docker)
)

// Image is a built guest base.
type Image struct {
	Variant       string
	Dir           string // the cache entry
	Kernel        string // vmlinuz
	Initrd        string // initrd.img
	Disk          string // disk.img: raw ext4, the guest's root file system (read-only: overlay it)
	KernelVersion string // e.g. "6.1.0-56-amd64"
	Packages      string // "linux-image-amd64=… qemu-guest-agent=… tini=…"
	Hash          string // of the inputs
	Tree          rootfs.Tree
	// DockerImage is the database's image in the guest's dockerd (variant Docker).
	DockerImage string
}

// Facts describe the image for a run's stored environment.
func (i Image) Facts() map[string]string {
	return map[string]string{"guest_image": i.Disk, "guest_image_inputs": i.Hash, "guest_kernel": i.KernelVersion,
		"guest_packages": i.Packages}
}

// Cache holds bases under Root (DefaultRoot when "").
type Cache struct{ Root string }

// Hash is the key of tree's base of a variant: the tree's recipe, the build script and every
// guest file.
func Hash(tree rootfs.Tree, variant string) string {
	h := sha256.New()
	fmt.Fprintf(h, "tree %s\x00variant %s\x00build %x\x00", tree.Hash, variant, sha256.Sum256(buildScript))
	var names []string
	_ = fs.WalkDir(guestFiles, "guest", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		b, _ := guestFiles.ReadFile(n)
		fmt.Fprintf(h, "%s %x\x00", n, sha256.Sum256(b))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c Cache) entry(tree rootfs.Tree, variant string) (string, string) {
	root := c.Root
	if root == "" {
		root = DefaultRoot
	}
	hash := Hash(tree, variant)
	name := tree.DBMS
	if variant != Plain {
		name += "-" + variant
	}
	return filepath.Join(root, name+"-"+hash[:16]), hash
}

// Find returns tree's base of variant, or an error wrapping ErrNotBuilt that says how to build it.
func (c Cache) Find(tree rootfs.Tree, variant string) (Image, error) {
	dir, hash := c.entry(tree, variant)
	img, err := load(dir, hash, tree, variant)
	if errors.Is(err, ErrNotBuilt) {
		err = prereq.New(c.Need(tree.DBMS, variant, 0, ""), fmt.Errorf("%w for %s %s(%s)", err, tree.DBMS, variant+" ", dir))
	}
	return img, err
}

// Get returns tree's base of variant, building it when the cache has none (true: built now). A
// build in another process is waited for, not repeated.
func (c Cache) Get(ctx context.Context, tree rootfs.Tree, variant string) (Image, bool, error) {
	dir, hash := c.entry(tree, variant)
	if img, err := load(dir, hash, tree, variant); err == nil {
		return img, false, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return Image{}, false, err
	}
	unlock, err := flock.Lock(ctx, dir+".lock", nil)
	if err != nil {
		return Image{}, false, err
	}
	defer unlock()
	if img, err := load(dir, hash, tree, variant); err == nil {
		return img, false, nil // built by another process while we waited
	}
	start := time.Now()
	if err := build(ctx, tree, variant, dir, hash); err != nil {
		return Image{}, false, fmt.Errorf("build the %s guest image: %w", tree.DBMS, err)
	}
	recordBuild(dir, time.Since(start))
	img, err := load(dir, hash, tree, variant)
	if err == nil {
		removeOutdated(dir)
	}
	return img, err == nil, err
}

// entryRe is a cache entry's name: <dbms>[-docker]-<16 hex>, with ".tmp" while it is built.
var entryRe = regexp.MustCompile(`^([a-z0-9]+(?:-docker)?)-[0-9a-f]{16}(\.tmp)?$`)

// removeOutdated removes the entries of the same database and variant built from other inputs
// (a changed recipe, build script or guest file), and what interrupted builds left, unless
// another process holds their lock. Nothing else in the cache is touched.
func removeOutdated(current string) {
	base := filepath.Base(current)
	m := entryRe.FindStringSubmatch(base)
	if m == nil {
		return
	}
	ents, _ := os.ReadDir(filepath.Dir(current))
	for _, e := range ents {
		n := entryRe.FindStringSubmatch(e.Name())
		if n == nil || n[1] != m[1] || e.Name() == base || !e.IsDir() {
			continue
		}
		entry := filepath.Join(filepath.Dir(current), strings.TrimSuffix(e.Name(), ".tmp"))
		unlock, ok, err := flock.TryLock(entry + ".lock")
		if err != nil || !ok {
			continue // in use
		}
		_ = os.RemoveAll(filepath.Join(filepath.Dir(current), e.Name()))
		if _, err := os.Stat(entry); os.IsNotExist(err) {
			_ = os.Remove(entry + ".lock")
		}
		unlock()
	}
}

// inputsFile records the hash an entry was built from; an entry without it is not a base.
const inputsFile = "inputs.txt"

func build(ctx context.Context, tree rootfs.Tree, variant, dir, hash string) error {
	work, err := os.MkdirTemp(filepath.Dir(dir), ".boxbench-guestfiles-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	err = fs.WalkDir(guestFiles, "guest", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(work, "files", strings.TrimPrefix(p, "guest"))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := guestFiles.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o755)
	})
	if err != nil {
		return err
	}
	script := filepath.Join(work, "build.sh")
	if err := os.WriteFile(script, buildScript, 0o755); err != nil {
		return err
	}
	if _, err := command.Run(ctx, "bash", script, tree.Dir, filepath.Join(work, "files"), dir, variant); err != nil {
		return err
	}
	if variant == Docker {
		if err := loadDockerImage(ctx, tree, dir, work); err != nil {
			_ = os.RemoveAll(dir)
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, inputsFile), []byte(hash+"\n"), 0o644)
}

func load(dir, hash string, tree rootfs.Tree, variant string) (Image, error) {
	b, err := os.ReadFile(filepath.Join(dir, inputsFile))
	if err != nil || strings.TrimSpace(string(b)) != hash {
		return Image{}, ErrNotBuilt
	}
	img := Image{Variant: variant, Dir: dir, Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.img"),
		Disk: filepath.Join(dir, "disk.img"), Hash: hash, Tree: tree}
	for _, f := range []string{img.Kernel, img.Initrd, img.Disk} {
		if _, err := os.Stat(f); err != nil {
			return Image{}, fmt.Errorf("%w: %v", ErrNotBuilt, err)
		}
	}
	k, _ := os.ReadFile(filepath.Join(dir, "kernel.txt"))
	img.KernelVersion = strings.TrimSpace(string(k))
	p, _ := os.ReadFile(filepath.Join(dir, "packages.txt"))
	img.Packages = strings.Join(strings.Fields(string(p)), " ")
	if variant == Docker {
		img.DockerImage = dockerRef(tree)
	}
	return img, nil
}
