// Package image provides the container images boxbench runs databases in.
//
// A built image is a root filesystem from the rootfs cache (Debian packages at the host's
// versions) imported into a container engine. It is content-addressed like the tree: its tag and
// labels carry the hash of the tree's recipe, so importing again with the same inputs finds the
// image and does nothing, and an image already in the engine is used without its tree. The
// versions of the installed packages are stored in the image's labels, so the native platform's
// version can be checked against it.
//
// A user may name an image instead (e.g. "postgres:16" where a registry is reachable); its
// digest is recorded and a warning says that native and container versions are not the same
// build.
package image

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/images/rootfs"
)

// Repository is the name every built image is tagged under: boxbench/<dbms>:<hash prefix>.
const Repository = "boxbench"

// Labels on built images: a tree's labels (rootfs.Tree.Labels), unchanged since images were
// built here. Every container, volume and network boxbench creates also carries LabelBoxbench;
// the platform adds the experiment and run.
const (
	LabelBoxbench      = rootfs.LabelBoxbench
	LabelDBMS          = rootfs.LabelDBMS
	LabelInputs        = rootfs.LabelInputs
	LabelRecipe        = rootfs.LabelRecipe
	LabelServerPackage = rootfs.LabelServerPackage
	LabelServerVersion = rootfs.LabelServerVersion
	LabelPackages      = rootfs.LabelPackages
	LabelUser          = rootfs.LabelUser
	LabelUID           = rootfs.LabelUID
	LabelGID           = rootfs.LabelGID
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

// Tag is the image reference a recipe is imported under: boxbench/<dbms>:<first 16 hex digits
// of its hash>, the name its tree has in the rootfs cache.
func Tag(r rootfs.Recipe) string { return Repository + "/" + r.DBMS + ":" + r.Hash()[:16] }

// Connect opens the engine named by the environment (DOCKER_HOST, DOCKER_API_VERSION, …; a
// podman socket works the same way) and negotiates the API version with it. Nothing is asked
// until the first call; every question asked through it has a deadline (Bound).
func Connect() (client.APIClient, error) {
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("connect to the container engine: %w", err)
	}
	return Bound(c), nil
}

// ErrNotBuilt means no image with the current inputs exists in the engine.
var ErrNotBuilt = errors.New("image not built")

// ErrVersionMismatch means the native host and the image run different server versions.
var ErrVersionMismatch = errors.New("native and image server versions differ")

// fromLabels rebuilds an Image from a built image's labels.
func fromLabels(ref, id string, labels map[string]string) (Image, error) {
	im := Image{Ref: ref, ID: id, DBMS: labels[LabelDBMS], Inputs: labels[LabelInputs],
		ServerPackage: labels[LabelServerPackage], ServerVersion: labels[LabelServerVersion],
		PackageVersions: rootfs.ParseVersions(labels[LabelPackages]), User: labels[LabelUser]}
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
	host, err := rootfs.HostVersion(ctx, im.ServerPackage)
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
