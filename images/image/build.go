package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image/tarball"
)

// defaultPath is the PATH of an imported image (an import has no configuration of its own).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Build makes d's image unless the engine has one with the current inputs. It returns the image
// and whether it was imported now (false: found in the engine).
//
// An image found in the engine is used as it is: its tree need not exist in the rootfs cache.
// Otherwise the tree is taken from the cache (built there first when absent, see
// rootfs.Cache.Get) and streamed to the engine as a tar archive; the tree stays in the cache
// for the other platforms.
func (s *Store) Build(ctx context.Context, d dbms.DBMS) (Image, bool, error) {
	r, err := s.Recipe(ctx, d)
	if err != nil {
		return Image{}, false, err
	}
	if im, err := s.find(ctx, r); err == nil {
		s.Log.Info("image up to date", "dbms", d.Name(), "ref", im.Ref)
		return im, false, nil
	} else if !errors.Is(err, ErrNotBuilt) {
		return Image{}, false, err
	}
	// One import of a tree at a time on this host: two `images build` at once (a test run's
	// image and guest-image builds) would both import it, leaving an untagged copy behind.
	unlock, err := s.Rootfs.LockEntry(ctx, r, "import")
	if err != nil {
		return Image{}, false, err
	}
	defer unlock()
	if im, err := s.find(ctx, r); err == nil {
		s.Log.Info("image imported by another build", "dbms", d.Name(), "ref", im.Ref)
		return im, false, nil
	} else if !errors.Is(err, ErrNotBuilt) {
		return Image{}, false, err
	}
	start := time.Now()
	tree, _, err := s.Rootfs.Get(ctx, d)
	if err != nil {
		return Image{}, false, fmt.Errorf("build %s image: %w", d.Name(), err)
	}
	// The tree's own recipe names the image: the host could have changed between the two looks.
	if err := s.importTree(ctx, tree.Dir, Tag(tree.Recipe), tree.Labels()); err != nil {
		return Image{}, false, fmt.Errorf("build %s image: %w", d.Name(), err)
	}
	im, err := s.find(ctx, tree.Recipe)
	if err != nil {
		return Image{}, false, err
	}
	s.Log.Info("image built", "dbms", d.Name(), "ref", im.Ref, "id", im.ID,
		d.ServerPackage(), im.ServerVersion, "seconds", time.Since(start).Seconds())
	return im, true, nil
}

// ImportChanges are the Dockerfile instructions an import of a tree applies: the environment and
// the tree's labels, in a fixed order. The vm-docker guest's dockerd imports with the same ones.
func ImportChanges(labels map[string]string) []string {
	changes := []string{"ENV PATH=" + defaultPath, "ENV LANG=C.UTF-8"}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		changes = append(changes, "LABEL "+k+"="+strconv.Quote(labels[k]))
	}
	return changes
}

// importTree streams a tree's directory to the engine as a tar archive and tags the result.
// Labels go in as Dockerfile LABEL instructions, the only way an import takes them. The tree is
// only read.
func (s *Store) importTree(ctx context.Context, dir, tag string, labels map[string]string) error {
	changes := ImportChanges(labels)
	pr, pw := io.Pipe()
	go func() {
		tw := tarball.NewWriter(pw, nil)
		err := tw.Tree(dir, "")
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	rc, err := s.Engine.ImageImport(ctx, image.ImportSource{Source: pr, SourceName: "-"}, tag,
		image.ImportOptions{Changes: changes, Message: "boxbench images build"})
	if err == nil {
		_, err = readProgress(rc)
		rc.Close()
	}
	pr.CloseWithError(errors.New("import finished")) // unblocks the writer if the engine stopped reading
	if err != nil {
		return fmt.Errorf("import %s into the engine as %s: %w", dir, tag, err)
	}
	return nil
}
