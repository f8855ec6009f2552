// Package image provides the container images boxbench runs databases in.
//
// Images are built offline from Debian packages: debootstrap a minimal root filesystem with the
// database's packages from the mirror the host's apt uses, then import it into the engine. An
// image is content-addressed: its tag is derived from the hash of everything that decides its
// content (dbms, package list, suite, mirror, architecture, recipe version), so building again
// with the same inputs finds the image and does nothing. The versions of the installed packages
// are stored in the image's labels, so the native platform's version can be checked against it.
//
// A user may name an image instead (e.g. "postgres:16" where a registry is reachable); its
// digest is recorded and a warning says that native and container versions are not the same
// build.
package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"

	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/dbms"
)

// RecipeVersion changes whenever the way an image is built changes; it is part of the hash, so
// old images are not mistaken for new ones.
const RecipeVersion = 2

// DefaultSuite is the Debian release images are built from, the one the native host runs.
const DefaultSuite = "bookworm"

// ExtraPackages go into every image besides the database's own packages: fio measures the
// storage from inside the box the same way it does natively; stress-ng is the CPU and memory
// hog of noisy neighbours.
var ExtraPackages = []string{"fio", "stress-ng"}

// Repository is the name every built image is tagged under: boxbench/<dbms>:<hash prefix>.
const Repository = "boxbench"

// Labels on built images. Every container, volume and network boxbench creates also carries
// LabelBoxbench; the platform adds the experiment and run.
const (
	LabelBoxbench      = "boxbench"        // "1"
	LabelDBMS          = "boxbench.dbms"   // dbms name
	LabelInputs        = "boxbench.inputs" // sha256 of the Recipe (hex)
	LabelRecipe        = "boxbench.recipe" // Recipe as JSON
	LabelServerPackage = "boxbench.server.package"
	LabelServerVersion = "boxbench.server.version"
	LabelPackages      = "boxbench.packages" // "name=version …" of every installed package
	LabelUser          = "boxbench.user"     // the account the server runs as
	LabelUID           = "boxbench.uid"      // its numeric uid inside the image
	LabelGID           = "boxbench.gid"      // its numeric primary gid inside the image
)

// Image is an image a box can run.
type Image struct {
	Ref             string            // what containers are created from (tag or user's reference)
	ID              string            // the engine's image id (sha256:…)
	DBMS            string            // dbms name
	Inputs          string            // input hash; "" for a user-named image
	Digest          string            // repository digest of a user-named image ("" when local)
	UserNamed       bool              // the user named the image; it was not built by boxbench
	ServerPackage   string            // the dbms's ServerPackage
	ServerVersion   string            // its version in the image ("" when unknown)
	PackageVersions map[string]string // every installed Debian package → version
	User            string            // the server's account
	UID, GID        int               // its ids inside the image (data directories are chowned to these)
	Warnings        []string          // things the run should record (e.g. versions differ from native)
}

// Facts describe the image for a run's stored environment.
func (im Image) Facts() map[string]string {
	f := map[string]string{"image": im.Ref, "image_id": im.ID,
		"image_server_package": im.ServerPackage, "image_server_version": im.ServerVersion}
	if im.Inputs != "" {
		f["image_inputs"] = im.Inputs
	}
	if im.UserNamed {
		f["image_user_named"] = "true"
		f["image_digest"] = im.Digest
	}
	return f
}

// Recipe is everything that decides a built image's content.
type Recipe struct {
	DBMS     string   `json:"dbms"`
	Packages []string `json:"packages"` // sorted, extras included
	Suite    string   `json:"suite"`
	// Sources are the apt sources the image installs from: the suite's mirror first (debootstrap
	// uses it), then its companion suites (updates, security), as the host's apt has them.
	Sources []Source `json:"sources"`
	// Pins are the host's installed versions of Packages: the image installs exactly these, so
	// native and container run the same build. A host upgrade changes the inputs.
	Pins    map[string]string `json:"pins,omitempty"`
	Arch    string            `json:"arch"`
	Version int               `json:"recipe_version"`
}

// NewRecipe describes the image of d built from sources (sources[0] is suite's mirror) with
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

// Tag is the image reference a recipe is built under: boxbench/<dbms>:<first 16 hex digits>.
func (r Recipe) Tag() string { return Repository + "/" + r.DBMS + ":" + r.Hash()[:16] }

// Connect opens the engine named by the environment (DOCKER_HOST, DOCKER_API_VERSION, …; a
// podman socket works the same way) and negotiates the API version with it.
func Connect() (*client.Client, error) {
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("connect to the container engine: %w", err)
	}
	return c, nil
}

// ErrNotBuilt means no image with the current inputs exists in the engine.
var ErrNotBuilt = errors.New("image not built")

// ErrVersionMismatch means the native host and the image run different server versions.
var ErrVersionMismatch = errors.New("native and image server versions differ")

// fromLabels rebuilds an Image from a built image's labels.
func fromLabels(ref, id string, labels map[string]string) (Image, error) {
	im := Image{Ref: ref, ID: id, DBMS: labels[LabelDBMS], Inputs: labels[LabelInputs],
		ServerPackage: labels[LabelServerPackage], ServerVersion: labels[LabelServerVersion],
		PackageVersions: parseVersions(labels[LabelPackages]), User: labels[LabelUser]}
	var err1, err2 error
	im.UID, err1 = strconv.Atoi(labels[LabelUID])
	im.GID, err2 = strconv.Atoi(labels[LabelGID])
	if err := errors.Join(err1, err2); err != nil {
		return im, fmt.Errorf("image %s: labels %s/%s: %w", ref, LabelUID, LabelGID, err)
	}
	return im, nil
}

// CheckNative compares the host's installed server package with the image's. It returns nil
// when they are the same version; an error wrapping ErrVersionMismatch when they differ, the
// package is missing on either side, or the image was named by the user.
func CheckNative(ctx context.Context, im Image) error {
	host, err := HostVersion(ctx, im.ServerPackage)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrVersionMismatch, err)
	}
	switch {
	case im.ServerVersion == "":
		return fmt.Errorf("%w: image %s has no %s package; native runs %s", ErrVersionMismatch, im.Ref, im.ServerPackage, host)
	case host != im.ServerVersion:
		hint := "rebuild with `boxbench images build --dbms " + im.DBMS + "` after upgrading the host, or upgrade the host"
		if im.UserNamed {
			hint = "the image was named by the user, not built from the host's packages"
		}
		return fmt.Errorf("%w: %s is %s natively and %s in image %s (%s)", ErrVersionMismatch,
			im.ServerPackage, host, im.ServerVersion, im.Ref, hint)
	}
	return nil
}
