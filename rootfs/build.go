package rootfs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxbench/boxbench/command"
	"github.com/boxbench/boxbench/storage"
)

// buildDebian makes r's root filesystem in dir (which must not exist): debootstrap in a private
// mount and PID namespace (so a cancelled build cannot leave its /proc or /dev mounts or its
// dpkg processes behind), then the host's package state, then trimmed of what a server never
// uses.
func buildDebian(ctx context.Context, log *slog.Logger, r Recipe, dir string) error {
	if err := debootstrap(ctx, r, dir); err != nil {
		return err
	}
	if err := update(ctx, log, r, dir); err != nil {
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

// update brings the root filesystem to the host's package state: debootstrap knows one suite,
// while the host also installs from the companion suites (security, updates). The tree gets the
// same apt sources, every package upgraded, and the recipe's packages at the host's versions.
// Services are kept from starting (policy-rc.d) while packages are configured.
func update(ctx context.Context, log *slog.Logger, r Recipe, dir string) error {
	policy := filepath.Join(dir, "usr/sbin/policy-rc.d")
	if err := os.WriteFile(policy, []byte("#!/bin/sh\n# boxbench image build: no services\nexit 101\n"), 0o755); err != nil {
		return err
	}
	defer os.Remove(policy)
	if err := os.WriteFile(filepath.Join(dir, "etc/apt/sources.list.d/boxbench.sources"),
		[]byte(sourcesFile(r.Sources)), 0o644); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, "etc/apt/sources.list")); err != nil && !os.IsNotExist(err) {
		return err
	}
	apt := []string{"apt-get", "-q", "-y", "--no-install-recommends",
		"-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold"}
	run := func(args ...string) error {
		_, err := command.RunWith(ctx, command.Options{Env: aptEnv}, inRootfs(dir, append(apt, args...)...)...)
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
			// The host may run a version the mirror no longer has; the tree keeps the mirror's,
			// the Tree says so and the platforms report the difference.
			log.Warn("cannot install the host's package versions in the root filesystem", "err", err)
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
