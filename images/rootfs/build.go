package rootfs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxbench/boxbench/internal/command"
	"github.com/boxbench/boxbench/internal/storage"
)

// buildDebian makes r's root filesystem in dir (which must not exist): a copy of the Debian
// base (built first when the cache has none, see withBase), r's packages installed in it at the
// host's versions, r's files copied in, then trimmed of what a server never uses. apt runs in a
// private mount and PID namespace (so a cancelled build cannot leave its /proc mount or its dpkg
// processes behind).
func (c *Cache) buildDebian(ctx context.Context, r Recipe, dir string) error {
	if err := c.withBase(ctx, r, func(base string) error { return copyTree(ctx, base, dir) }); err != nil {
		return err
	}
	if err := install(ctx, c.log(), r, dir); err != nil {
		return err
	}
	if err := copyFiles(r, dir); err != nil {
		return err
	}
	return trim(dir)
}

// inRootfs runs argv in a private mount and PID namespace: whatever it mounts and whatever it
// starts end with it, even when it is killed. With rootfs set, argv runs chrooted there.
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

func debootstrap(ctx context.Context, r Recipe, dir string) error {
	argv := inRootfs("", "debootstrap", "--variant=minbase", "--arch="+r.Arch,
		"--include="+strings.Join(r.Packages, ","), r.Suite, dir, r.Mirror())
	if _, err := command.Run(ctx, argv...); err != nil {
		if log, rerr := os.ReadFile(filepath.Join(dir, "debootstrap", "debootstrap.log")); rerr == nil {
			err = fmt.Errorf("%w\ndebootstrap.log (tail):\n%s", err, command.Tail(log, command.TailBytes))
		}
		return err
	}
	return nil
}

// aptRunner runs apt-get with args in a root filesystem.
type aptRunner func(ctx context.Context, args ...string) error

// withAptPolicy calls fn with an apt-get of the root filesystem at dir while services are kept
// from starting (policy-rc.d) as packages are configured.
func withAptPolicy(dir string, fn func(apt aptRunner) error) error {
	policy := filepath.Join(dir, "usr/sbin/policy-rc.d")
	if err := os.WriteFile(policy, []byte("#!/bin/sh\n# boxbench image build: no services\nexit 101\n"), 0o755); err != nil {
		return err
	}
	defer os.Remove(policy)
	return fn(func(ctx context.Context, args ...string) error {
		argv := append([]string{"apt-get", "-q", "-y", "--no-install-recommends",
			"-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold"}, args...)
		_, err := command.RunWith(ctx, command.Options{Env: aptEnv}, inRootfs(dir, argv...)...)
		return err
	})
}

// writeSources gives the root filesystem the host's apt sources: debootstrap knows one suite,
// while the host also installs from the companion suites (security, updates).
func writeSources(dir string, sources []Source) error {
	if err := os.WriteFile(filepath.Join(dir, "etc/apt/sources.list.d/boxbench.sources"),
		[]byte(sourcesFile(sources)), 0o644); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, "etc/apt/sources.list")); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// install adds r's packages to a copy of the base at the host's versions (r.Pins), from the
// base's apt lists. When those are behind the mirror (a version no longer offered), the lists
// are updated and everything upgraded first, as a fresh debootstrap would have been; when the
// host's version is not offered at all, the tree keeps the mirror's, the Tree says so and the
// platforms report the difference.
func install(ctx context.Context, log *slog.Logger, r Recipe, dir string) error {
	var pinned, unpinned []string
	for _, p := range r.Packages {
		unpinned = append(unpinned, p)
		if v := r.Pins[p]; v != "" {
			p += "=" + v
		}
		pinned = append(pinned, p)
	}
	return withAptPolicy(dir, func(apt aptRunner) error {
		installPinned := func() error { return apt(ctx, append([]string{"--allow-downgrades", "install"}, pinned...)...) }
		if err := installPinned(); err != nil {
			log.Info("the Debian base's package lists are behind the mirror; updating them", "dbms", r.DBMS, "err", err)
			if err := apt(ctx, "update"); err != nil {
				return err
			}
			if err := apt(ctx, "dist-upgrade"); err != nil {
				return err
			}
			if err := installPinned(); err != nil {
				log.Warn("cannot install the host's package versions in the root filesystem", "err", err)
				if err := apt(ctx, append([]string{"install"}, unpinned...)...); err != nil {
					return err
				}
			}
		}
		return apt(ctx, "clean")
	})
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

// trim drops the downloaded packages and the apt lists: a third of the root filesystem, never
// used by a server.
func trim(dir string) error {
	for _, pattern := range []string{"var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*"} {
		files, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, f := range files {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeDir removes a build or a tree directory. A recursive delete through a bind-mounted /dev
// or /proc would damage the host, so removal is refused while anything is mounted under dir.
// With unmount set (a dead build's own leftovers), those mounts are unmounted first; a published
// tree's mounts belong to someone else and are never touched.
func removeDir(ctx context.Context, dir string, unmount bool) error {
	var err error
	if unmount {
		_, err = storage.Leftovers(ctx, dir, func(string) bool { return false })
	}
	if left := mountsUnder(dir); len(left) > 0 {
		return fmt.Errorf("not removing %s: %v still mounted (%v)", dir, left, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
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
