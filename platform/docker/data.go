package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/images/image/tarball"
	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
)

// initialise makes an empty data directory (InitDataDir) in a helper container the box's
// Teardown removes should the removal here fail.
func (b *box) initialise(ctx context.Context) (string, error) {
	db, how, err := b.p.InitDataDir(ctx, b.req, b.img, b.layout, b.addHelper, b.removeHelper)
	b.facts["restore"] = how
	return db, err
}

// InitDataDir makes an empty data directory with the dbms's InitCommands, run in a helper
// container from the same image (the tools live there), as the server's user, on a host
// directory in r.WorkDir. The result is then restored like any seed, so every storage backend is
// filled the same way. It returns the host path of the new data directory and how it was made
// (the start of the "restore" fact). The helper container's id goes to track as soon as it
// exists and to untrack (which removes it) before InitDataDir returns; Settled keeps its create
// from being cut short. Other platforms of the same engine (swarm) use it too.
func (p *Platform) InitDataDir(ctx context.Context, r platform.Request, img image.Image, layout dbms.Layout,
	track func(id string), untrack func(ctx context.Context, id string)) (string, string, error) {
	dir := filepath.Join(r.WorkDir, "init")
	db := filepath.Join(dir, "db")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	if err := os.Mkdir(db, 0o700); err != nil {
		return "", "", err
	}
	if err := os.Chown(db, img.UID, img.GID); err != nil {
		return "", "", err
	}
	steps := r.DBMS.InitCommands(layout)
	if len(steps) == 0 {
		return db, "initialised empty (an empty directory), then ", nil
	}
	how := "initialised empty in a helper container, then "
	name := ObjectName(r, "init")
	cctx, cancel := Settled(ctx)
	defer cancel()
	c, err := p.engine.ContainerCreate(cctx,
		&container.Config{Image: img.ID, Cmd: []string{"/bin/sleep", "infinity"}, User: "root",
			Labels: Labels(r, "init")},
		&container.HostConfig{NetworkMode: "none", Mounts: []mount.Mount{{Type: mount.TypeBind,
			Source: dir, Target: dataMount}}}, nil, nil, name)
	if err != nil {
		return "", how, fmt.Errorf("create init container %s: %w", name, err)
	}
	track(c.ID)
	defer untrack(context.WithoutCancel(ctx), c.ID)
	if err := p.engine.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		return "", how, fmt.Errorf("start init container %s: %w", name, err)
	}
	for _, s := range steps {
		if _, err := p.Exec(ctx, c.ID, r.DBMS.User(), "/", s.Argv, s.Stdin); err != nil {
			return "", how, fmt.Errorf("initialise %s data directory: %w", r.DBMS.Name(), err)
		}
	}
	return db, how, nil
}

// restoreHost fills a host-side data directory (bind, tmpfs, blockdev, or a local volume's
// mountpoint) with RestoreHost.
func (b *box) restoreHost(ctx context.Context, seed string, files map[string][]byte) error {
	method, err := RestoreHost(ctx, b.hostDir, seed, files, b.img.UID, b.img.GID)
	if err != nil {
		return err
	}
	where := "host directory"
	if b.req.Storage == StorageVolume {
		where = "the local volume's mountpoint"
	}
	b.facts["restore"] += method + " into " + where
	return nil
}

// RestoreHost fills root/db, a host-side data directory, with the same cp as natively, then
// writes the configuration files (0600: they may hold the password) and hands the directory to
// the server's user inside the image (uid, gid). It returns the copy method.
func RestoreHost(ctx context.Context, root, seed string, files map[string][]byte, uid, gid int) (string, error) {
	db := filepath.Join(root, "db")
	if err := os.MkdirAll(db, 0o700); err != nil {
		return "", err
	}
	method, err := storage.Restore(ctx, seed, db)
	if err != nil {
		return "", err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(db, name), content, 0o600); err != nil {
			return "", err
		}
	}
	_, err = command.Run(ctx, "chown", "-R", strconv.Itoa(uid)+":"+strconv.Itoa(gid), db)
	return method, err
}

// copyIn copies into the created container, through the API, what its own layer needs: the run
// directory, and (overlay, or a volume this process cannot see) the data directory with the
// configuration. The engine writes through volume mounts of a created container.
func (b *box) copyIn(ctx context.Context, seed string, files map[string][]byte) error {
	root := &tarball.Owner{UID: 0, GID: 0}
	user := &tarball.Owner{UID: b.img.UID, GID: b.img.GID}
	pr, pw := io.Pipe()
	go func() {
		tw := tarball.NewWriter(pw, root)
		err := tw.Dir("boxbench", 0o755)
		tw.SetOwner(user)
		if err == nil {
			err = tw.Dir("boxbench/run", 0o755)
		}
		if err == nil && b.hostDir == "" {
			err = writeData(tw, root, user, seed, files)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	err := b.p.engine.CopyToContainer(ctx, b.id, "/", pr, container.CopyToContainerOptions{})
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return fmt.Errorf("copy data into container: %w", err)
	}
	if b.hostDir == "" {
		b.facts["restore"] += "tar stream through the engine API (CopyToContainer into the created container)"
	}
	return nil
}

func writeData(tw *tarball.Writer, root, user *tarball.Owner, seed string, files map[string][]byte) error {
	tw.SetOwner(root)
	if err := tw.Dir("boxbench/data", 0o755); err != nil {
		return err
	}
	tw.SetOwner(user)
	if err := tw.Dir("boxbench/data/db", 0o700); err != nil {
		return err
	}
	if err := tw.Tree(seed, "boxbench/data/db"); err != nil {
		return err
	}
	for name, content := range files {
		if err := tw.File("boxbench/data/db/"+name, 0o600, content); err != nil {
			return err
		}
	}
	return nil
}
