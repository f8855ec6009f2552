package image

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image/tarball"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/internal/prereq"
)

// Store imports, finds and inspects database images in one engine. The root filesystems it
// imports come from Rootfs, which also decides the recipe (and so the tag) of each image.
//
// A Store is safe for concurrent use; imports of the same tree are serialised across processes
// (rootfs.Cache.LockEntry), so a tree is imported once.
type Store struct {
	Engine client.APIClient
	Log    *slog.Logger
	Rootfs *rootfs.Cache
}

// NewStore returns a store over engine with a rootfs cache at rootfs.DefaultRoot.
func NewStore(engine client.APIClient, log *slog.Logger) *Store {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Store{Engine: engine, Log: log, Rootfs: rootfs.NewCache("", log)}
}

// Recipe returns the recipe d's image is imported from on this host (see rootfs.Cache.Recipe).
func (s *Store) Recipe(ctx context.Context, d dbms.DBMS) (rootfs.Recipe, error) {
	return s.Rootfs.Recipe(ctx, d)
}

// Resolve finds d's built image in the engine the environment names (DOCKER_HOST); see
// Store.Resolve.
func Resolve(ctx context.Context, d dbms.DBMS) (Image, error) {
	engine, err := Connect()
	if err != nil {
		return Image{}, err
	}
	defer engine.Close()
	return NewStore(engine, nil).Resolve(ctx, d)
}

// Resolve returns the built image of d for the current inputs, or an error wrapping ErrNotBuilt
// that says how to build it.
func (s *Store) Resolve(ctx context.Context, d dbms.DBMS) (Image, error) {
	r, err := s.Recipe(ctx, d)
	if err != nil {
		return Image{}, err
	}
	return s.find(ctx, r)
}

func (s *Store) find(ctx context.Context, r rootfs.Recipe) (Image, error) {
	hash := r.Hash()
	list, err := s.Engine.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(
		filters.Arg("label", LabelInputs+"="+hash), filters.Arg("label", LabelDBMS+"="+r.DBMS))})
	if err != nil {
		return Image{}, fmt.Errorf("list images: %w", err)
	}
	if len(list) > 0 { // equal inputs, equal content: any of them will do
		sum := list[0]
		ref := Tag(r)
		if !contains(sum.RepoTags, ref) {
			if len(sum.RepoTags) == 0 {
				ref = sum.ID
			} else {
				ref = sum.RepoTags[0]
			}
		}
		return fromLabels(ref, sum.ID, sum.Labels)
	}
	err = fmt.Errorf("%w: no %s image with inputs %s (tag %s)", ErrNotBuilt, r.DBMS, hash[:16], Tag(r))
	return Image{}, prereq.New(s.need(r), err)
}

// typicalImport is how long importing a tree into the engine takes on a 2-vCPU host (docs/ci.md:
// two trees' imports, 33 s at once), for the estimate.
const typicalImport = 20 * time.Second

// need is the prerequisite of r's missing image: its import, after its tree's build when the
// tree is not built either (one command makes both).
func (s *Store) need(r rootfs.Recipe) prereq.Need {
	cmd := "boxbench images build --dbms " + r.DBMS
	n := prereq.Need{What: r.DBMS + "'s engine image is not built", Command: cmd, Takes: typicalImport, Basis: prereq.Typical}
	if s.Rootfs == nil {
		return n
	}
	if _, err := s.Rootfs.FindRecipe(r); errors.Is(err, rootfs.ErrNotBuilt) {
		tree := s.Rootfs.Need(r.DBMS, cmd)
		n.What = r.DBMS + "'s root filesystem and engine image are not built"
		n.Takes, n.Basis = tree.Takes+typicalImport, tree.Basis+" (and the import, "+prereq.Typical+")"
	}
	return n
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// List returns every image boxbench built in this engine, newest first.
func (s *Store) List(ctx context.Context) ([]Image, error) {
	list, err := s.Engine.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(
		filters.Arg("label", LabelBoxbench+"=1"))})
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Created > list[j].Created })
	var out []Image
	for _, sum := range list {
		ref := sum.ID
		if len(sum.RepoTags) > 0 {
			ref = sum.RepoTags[0]
		}
		im, err := fromLabels(ref, sum.ID, sum.Labels)
		if err != nil {
			continue // not one of ours after all
		}
		out = append(out, im)
	}
	return out, nil
}

// For is the image the user named for d (ref, through Named), or boxbench's own built image
// (ref "", through Resolve).
func (s *Store) For(ctx context.Context, ref string, d dbms.DBMS) (Image, error) {
	if ref != "" {
		return s.Named(ctx, ref, d)
	}
	return s.Resolve(ctx, d)
}

// Named resolves an image the user named for d: pulled if it is not present (where a registry
// is reachable), its digest recorded, its package versions and the server's account read from
// its files. The result always carries a warning: it is not built from the host's packages.
func (s *Store) Named(ctx context.Context, ref string, d dbms.DBMS) (Image, error) {
	ins, err := s.Engine.ImageInspect(ctx, ref)
	if cerrdefs.IsNotFound(err) {
		s.Log.Info("pulling image", "ref", ref)
		if err = s.pull(ctx, ref); err == nil {
			ins, err = s.Engine.ImageInspect(ctx, ref)
		}
	}
	if err != nil {
		return Image{}, fmt.Errorf("image %s: %w", ref, err)
	}
	im := Image{Ref: ref, ID: ins.ID, DBMS: d.Name(), UserNamed: true, ServerPackage: d.ServerPackage(),
		User: d.User()}
	if len(ins.RepoDigests) > 0 {
		im.Digest = ins.RepoDigests[0]
	}
	files, err := s.readFiles(ctx, ref, "/etc/passwd", "/var/lib/dpkg/status")
	if err != nil {
		return Image{}, err
	}
	if im.UID, im.GID, err = rootfs.ParsePasswd(bytes.NewReader(files["/etc/passwd"]), d.User()); err != nil {
		return Image{}, fmt.Errorf("image %s: %w", ref, err)
	}
	im.PackageVersions, _ = rootfs.ParseStatus(bytes.NewReader(files["/var/lib/dpkg/status"]))
	im.ServerVersion = im.PackageVersions[d.ServerPackage()]
	w := fmt.Sprintf("image %s (digest %q) was named by the user, not built from the host's packages: "+
		"native and container may run different builds", ref, im.Digest)
	host, herr := rootfs.HostVersion(ctx, d.ServerPackage())
	switch {
	case im.ServerVersion == "":
		w += fmt.Sprintf("; the image has no Debian package %s, so its version is unknown", d.ServerPackage())
	case herr != nil:
		w += fmt.Sprintf("; image has %s %s, the host does not have it installed", d.ServerPackage(), im.ServerVersion)
	case host != im.ServerVersion:
		w += fmt.Sprintf("; versions differ: %s is %s natively and %s in the image", d.ServerPackage(), host, im.ServerVersion)
	default:
		w += fmt.Sprintf("; the package version is the same (%s %s), its build may not be", d.ServerPackage(), host)
	}
	im.Warnings = append(im.Warnings, w)
	s.Log.Warn(w)
	return im, nil
}

func (s *Store) pull(ctx context.Context, ref string) error {
	rc, err := s.Engine.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = readProgress(rc)
	return err
}

// readFiles copies single files out of an image through a created (never started) container.
// A file that does not exist is returned empty.
func (s *Store) readFiles(ctx context.Context, ref string, paths ...string) (map[string][]byte, error) {
	// Not cancellable: a create the engine completes after the client gave up would leak.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	c, err := s.Engine.ContainerCreate(cctx, &container.Config{Image: ref, Cmd: []string{"/bin/true"},
		Labels: map[string]string{LabelBoxbench: "1", "boxbench.purpose": "image-inspect"}},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		return nil, fmt.Errorf("inspect files of image %s: %w", ref, err)
	}
	defer func() {
		_ = s.Engine.ContainerRemove(context.WithoutCancel(ctx), c.ID, container.RemoveOptions{Force: true})
	}()
	out := map[string][]byte{}
	for _, p := range paths {
		rc, _, err := s.Engine.CopyFromContainer(ctx, c.ID, p)
		if cerrdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("copy %s from image %s: %w", p, ref, err)
		}
		dir, err := os.MkdirTemp("", "boxbench-imagefile-")
		if err == nil {
			err = tarball.Extract(rc, dir, 0)
		}
		rc.Close()
		if err == nil {
			out[p], err = os.ReadFile(dir + "/" + p[strings.LastIndexByte(p, '/')+1:])
		}
		_ = os.RemoveAll(dir)
		if err != nil {
			return nil, fmt.Errorf("copy %s from image %s: %w", p, ref, err)
		}
	}
	return out, nil
}

// progress is one message of the engine's JSON progress stream (import, pull).
type progress struct {
	Status      string `json:"status"`
	Error       string `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

// readProgress drains a progress stream and returns its last status, or the error it reports.
func readProgress(r io.Reader) (string, error) {
	dec := json.NewDecoder(r)
	last := ""
	for {
		var m progress
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return last, nil
		} else if err != nil {
			return last, fmt.Errorf("read engine progress: %w", err)
		}
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			return last, errors.New(m.ErrorDetail.Message)
		}
		if m.Error != "" {
			return last, errors.New(m.Error)
		}
		if m.Status != "" {
			last = m.Status
		}
	}
}
