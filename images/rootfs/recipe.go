// Package rootfs builds and caches the root filesystems databases run in inside a box.
//
// A tree is built offline from Debian packages: a copy of one shared Debian base (a minimal
// system debootstrapped once from the mirror the host's apt uses) with the database's packages
// installed at the host's versions. A
// tree is content-addressed: it is filed under the hash of everything that decides its content
// (its Recipe), so building again with the same inputs finds it and does nothing. Each platform
// takes the same tree its own way (the Docker platform imports it as an engine image, LXC uses
// it as a container's rootfs, the VM platforms copy it onto a disk), so native, container and VM
// run the same build of the server.
//
// The package knows nothing of any container engine.
package rootfs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"sort"

	"github.com/boxbench/boxbench/dbms"
)

// RecipeVersion changes whenever the way a tree is built changes; it is part of the hash, so
// old trees and images are not mistaken for new ones.
const RecipeVersion = 3 // 3: trees are a shared Debian base plus their own packages

// DefaultSuite is the Debian release trees are built from, the one the native host runs.
const DefaultSuite = "bookworm"

// ExtraPackages go into every tree besides the database's own packages: fio measures the
// storage from inside the box the same way it does natively; stress-ng is the CPU and memory
// hog of noisy neighbours.
var ExtraPackages = []string{"fio", "stress-ng"}

// Recipe is everything that decides a built tree's content.
type Recipe struct {
	DBMS     string   `json:"dbms"`
	Packages []string `json:"packages"` // sorted, extras included
	Suite    string   `json:"suite"`
	// Sources are the apt sources the tree installs from: the suite's mirror first (debootstrap
	// uses it), then its companion suites (updates, security), as the host's apt has them.
	Sources []Source `json:"sources"`
	// Pins are the host's installed versions of Packages: the tree installs exactly these, so
	// native and boxes run the same build. A host upgrade changes the inputs.
	Pins map[string]string `json:"pins,omitempty"`
	// Files are files besides the packages (dbms.Built: a server boxbench builds in `make
	// setup`), by absolute path, with their sha256: copied from the host into the tree at the
	// same path, so native and boxes run the same build.
	Files   map[string]string `json:"files,omitempty"`
	Arch    string            `json:"arch"`
	Version int               `json:"recipe_version"`
}

// NewRecipe describes the tree of d built from sources (sources[0] is suite's mirror) with
// pinned package versions, for this host's architecture.
func NewRecipe(d dbms.DBMS, suite string, sources []Source, pins map[string]string) Recipe {
	pkgs := append(append([]string{}, d.Packages()...), ExtraPackages...)
	sort.Strings(pkgs)
	pkgs = dedup(pkgs)
	return Recipe{DBMS: d.Name(), Packages: pkgs, Suite: suite, Sources: sources, Pins: pins,
		Arch: debianArch(runtime.GOARCH), Version: RecipeVersion}
}

// Mirror is the suite's mirror, where debootstrap fetches the base system.
func (r Recipe) Mirror() string {
	if len(r.Sources) == 0 {
		return ""
	}
	return r.Sources[0].URI
}

// JSON is the canonical encoding the hash is taken over (encoding/json sorts map keys).
func (r Recipe) JSON() string {
	b, _ := json.Marshal(r) // strings, ints, slices and maps of strings always encode
	return string(b)
}

// Hash is the hex sha256 of the recipe.
func (r Recipe) Hash() string {
	s := sha256.Sum256([]byte(r.JSON()))
	return hex.EncodeToString(s[:])
}

// Names that reach a path are checked against these: a dbms name is a plain identifier (no
// "-", so "<dbms>-<hash>" splits one way only), a hash is hex.
var (
	dbmsName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	fullHash = regexp.MustCompile(`^[0-9a-f]{64}$`)
	entry    = regexp.MustCompile(`^([a-z][a-z0-9_]{0,31})-([0-9a-f]{16})$`)
)

// entryName is the directory a recipe's tree is filed under: <dbms>-<first 16 hex of hash>.
func entryName(r Recipe) (string, error) {
	if !dbmsName.MatchString(r.DBMS) {
		return "", fmt.Errorf("rootfs: dbms name %q is not a plain identifier", r.DBMS)
	}
	return r.DBMS + "-" + r.Hash()[:16], nil
}

func dedup(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func debianArch(goarch string) string {
	switch goarch {
	case "386":
		return "i386"
	case "arm":
		return "armhf"
	case "ppc64le":
		return "ppc64el"
	}
	return goarch // amd64, arm64, s390x, riscv64 are spelled the same
}
