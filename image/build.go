package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/boxbench/boxbench/command"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/image/tarball"
	"github.com/boxbench/boxbench/storage"
)

// defaultPath is the PATH of an imported image (an import has no configuration of its own).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Build makes d's image unless one with the same inputs exists. It returns the image and
// whether it was built now (false: found in the engine's cache).
//
// The root filesystem is made by debootstrap in a boxbench-named temporary directory, in a
// private mount and PID namespace (so a cancelled build cannot leave its /proc or /dev mounts or
// its dpkg processes behind), streamed to the engine as a tar archive, and removed on every exit
// path.
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
	work, err := os.MkdirTemp(s.TempDir, "boxbench-image-"+d.Name()+"-")
	if err != nil {
		return Image{}, false, err
	}
	defer func() {
		if rerr := removeWork(context.WithoutCancel(ctx), work); rerr != nil {
			s.Log.Error("remove image work directory", "dir", work, "err", rerr)
		}
	}()
	start := time.Now()
	rootfs := filepath.Join(work, "rootfs")
	if err := debootstrap(ctx, r, rootfs); err != nil {
		return Image{}, false, fmt.Errorf("build %s image: %w", d.Name(), err)
	}
	if err := s.update(ctx, r, rootfs); err != nil {
		return Image{}, false, fmt.Errorf("build %s image: %w", d.Name(), err)
	}
	s.Log.Info("root filesystem ready", "dbms", d.Name(), "seconds", time.Since(start).Seconds())
	labels, err := rootfsLabels(r, d, rootfs)
	if err != nil {
		return Image{}, false, fmt.Errorf("build %s image: %w", d.Name(), err)
	}
	if err := trim(rootfs); err != nil {
		return Image{}, false, fmt.Errorf("build %s image: %w", d.Name(), err)
	}
	if err := s.importRootfs(ctx, rootfs, r.Tag(), labels); err != nil {
		return Image{}, false, fmt.Errorf("build %s image: %w", d.Name(), err)
	}
	im, err := s.find(ctx, r)
	if err != nil {
		return Image{}, false, err
	}
	s.Log.Info("image built", "dbms", d.Name(), "ref", im.Ref, "id", im.ID,
		d.ServerPackage(), im.ServerVersion, "seconds", time.Since(start).Seconds())
	return im, true, nil
}

// inRootfs runs argv in a private mount and PID namespace: whatever it mounts and whatever it
// starts end with it, even when it is killed.
func inRootfs(rootfs string, argv ...string) []string {
	pre := []string{"unshare", "--mount", "--pid", "--fork", "--kill-child"}
	if rootfs != "" {
		pre = append(pre, "--mount-proc="+filepath.Join(rootfs, "proc"), "--", "chroot", rootfs)
	} else {
		pre = append(pre, "--")
	}
	return append(pre, argv...)
}

var aptEnv = []string{"DEBIAN_FRONTEND=noninteractive", "LC_ALL=C.UTF-8"}

func debootstrap(ctx context.Context, r Recipe, rootfs string) error {
	argv := inRootfs("", "debootstrap", "--variant=minbase", "--arch="+r.Arch,
		"--include="+strings.Join(r.Packages, ","), r.Suite, rootfs, r.Mirror())
	if _, err := command.Run(ctx, argv...); err != nil {
		if log, rerr := os.ReadFile(filepath.Join(rootfs, "debootstrap", "debootstrap.log")); rerr == nil {
			err = fmt.Errorf("%w\ndebootstrap.log (tail):\n%s", err, command.Tail(log, command.TailBytes))
		}
		return err
	}
	return nil
}

// update brings the root filesystem to the host's package state: debootstrap knows one suite,
// while the host also installs from the companion suites (security, updates). The image gets the
// same apt sources, every package upgraded, and the recipe's packages at the host's versions.
// Services are kept from starting (policy-rc.d) while packages are configured.
func (s *Store) update(ctx context.Context, r Recipe, rootfs string) error {
	policy := filepath.Join(rootfs, "usr/sbin/policy-rc.d")
	if err := os.WriteFile(policy, []byte("#!/bin/sh\n# boxbench image build: no services\nexit 101\n"), 0o755); err != nil {
		return err
	}
	defer os.Remove(policy)
	if err := os.WriteFile(filepath.Join(rootfs, "etc/apt/sources.list.d/boxbench.sources"),
		[]byte(sourcesFile(r.Sources)), 0o644); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(rootfs, "etc/apt/sources.list")); err != nil && !os.IsNotExist(err) {
		return err
	}
	apt := []string{"apt-get", "-q", "-y", "--no-install-recommends",
		"-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold"}
	run := func(args ...string) error {
		_, err := command.RunWith(ctx, command.Options{Env: aptEnv}, inRootfs(rootfs, append(apt, args...)...)...)
		return err
	}
	if err := run("update"); err != nil {
		return err
	}
	if err := run("dist-upgrade"); err != nil {
		return err
	}
	if len(r.Pins) > 0 {
		args := []string{"--allow-downgrades", "install"}
		for _, p := range r.Packages {
			if v := r.Pins[p]; v != "" {
				args = append(args, p+"="+v)
			}
		}
		if err := run(args...); err != nil {
			// The host may run a version the mirror no longer has; the image keeps the mirror's,
			// its labels say so and CheckNative reports the difference.
			s.Log.Warn("cannot install the host's package versions in the image", "err", err)
		}
	}
	return run("clean")
}

// sourcesFile renders apt sources in deb822 format.
func sourcesFile(sources []Source) string {
	var b strings.Builder
	b.WriteString("# written by boxbench images build: the host's apt sources\n")
	for _, s := range sources {
		comps := s.Components
		if len(comps) == 0 {
			comps = []string{"main"}
		}
		fmt.Fprintf(&b, "\nTypes: deb\nURIs: %s\nSuites: %s\nComponents: %s\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
			s.URI, s.Suite, strings.Join(comps, " "))
	}
	return b.String()
}

// rootfsLabels records what the image holds: package versions from its dpkg database and the
// server account's ids from its passwd file.
func rootfsLabels(r Recipe, d dbms.DBMS, rootfs string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(rootfs, "var/lib/dpkg/status"))
	if err != nil {
		return nil, err
	}
	versions, err := parseStatus(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read dpkg status: %w", err)
	}
	for _, p := range r.Packages {
		if versions[p] == "" {
			return nil, fmt.Errorf("package %s is not installed in the root filesystem", p)
		}
	}
	pw, err := os.Open(filepath.Join(rootfs, "etc/passwd"))
	if err != nil {
		return nil, err
	}
	uid, gid, err := parsePasswd(pw, d.User())
	pw.Close()
	if err != nil {
		return nil, err
	}
	return map[string]string{
		LabelBoxbench: "1", LabelDBMS: d.Name(), LabelInputs: r.Hash(), LabelRecipe: r.JSON(),
		LabelServerPackage: d.ServerPackage(), LabelServerVersion: versions[d.ServerPackage()],
		LabelPackages: formatVersions(versions), LabelUser: d.User(),
		LabelUID: strconv.Itoa(uid), LabelGID: strconv.Itoa(gid),
	}, nil
}

// trim drops the downloaded packages and the apt lists: a third of the root filesystem, never
// used by a server.
func trim(rootfs string) error {
	for _, pattern := range []string{"var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*"} {
		files, _ := filepath.Glob(filepath.Join(rootfs, pattern))
		for _, f := range files {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// importRootfs streams rootfs to the engine as a tar archive and tags the result. Labels go in
// as Dockerfile LABEL instructions, the only way an import takes them.
func (s *Store) importRootfs(ctx context.Context, rootfs, tag string, labels map[string]string) error {
	changes := []string{"ENV PATH=" + defaultPath, "ENV LANG=C.UTF-8"}
	for k, v := range labels {
		changes = append(changes, "LABEL "+k+"="+strconv.Quote(v))
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tarball.NewWriter(pw, nil)
		err := tw.Tree(rootfs, "")
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
		return fmt.Errorf("import into the engine as %s: %w", tag, err)
	}
	return nil
}

// removeWork removes the debootstrap directory. Anything still mounted under it is unmounted
// first, and removal is refused while a mount remains: a recursive delete through a bind-mounted
// /dev or /proc would damage the host.
func removeWork(ctx context.Context, dir string) error {
	_, err := storage.Leftovers(ctx, dir, func(string) bool { return false })
	if left := mountsUnder(dir); len(left) > 0 {
		return fmt.Errorf("not removing %s: %v still mounted (%v)", dir, left, err)
	}
	return os.RemoveAll(dir)
}

func mountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return []string{"(cannot read /proc/self/mounts)"}
	}
	var out []string
	for _, m := range storage.ParseMounts(strings.NewReader(string(b))) {
		if strings.HasPrefix(m.Target, dir+"/") {
			out = append(out, m.Target)
		}
	}
	return out
}
