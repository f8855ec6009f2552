// Package native runs a database as a plain host process: the baseline every box is compared
// with. The server runs under the spec's limits in a cgroup of its own, with its data directory
// on a host directory, a tmpfs, or a dedicated loop-device filesystem.
package native

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/internal/storage"
	"github.com/boxbench/boxbench/platform"
)

// Platform is the native platform.
type Platform struct{}

// New returns the native platform.
func New() *Platform { return &Platform{} }

// Name is the platform's name in specs.
const Name = "native"

// Info: a host process has no container layer, no engine volumes and no OCI runtime.
func (p *Platform) Info() platform.Info {
	return platform.Info{Name: Name, Cluster: p, BoxCleaner: p, Storages: []string{storage.Bind, storage.Tmpfs, storage.Blockdev},
		Networks: []string{"host", "unix", NetworkNetns}, HostCgroup: true,
		Load:     &platform.Choice{Storage: storage.Bind, Network: "host"},
		Fallback: map[string]string{"overlay": storage.Bind, "volume": storage.Bind, "rootfs": storage.Bind}}
}

// Check: a host process has no container layer, no engine volumes and no OCI runtime.
func (*Platform) Check(_ context.Context, c platform.Choice) error {
	var errs []error
	switch c.Storage {
	case storage.Bind, storage.Tmpfs, storage.Blockdev:
	case "overlay":
		errs = append(errs, errors.New("native has no container layer"))
	case "volume":
		errs = append(errs, errors.New("native has no engine-managed volumes"))
	default:
		errs = append(errs, fmt.Errorf("native does not support storage %q", c.Storage))
	}
	switch c.Network {
	case "host":
	case NetworkNetns:
		for _, c := range []string{"ip", "nsenter", "iptables"} {
			if _, err := exec.LookPath(c); err != nil {
				errs = append(errs, fmt.Errorf("native network netns needs %s: %w", c, err))
			}
		}
	case "unix":
		if c.DBMS != nil {
			if _, err := dbms.UnixSocket(c.DBMS, dbms.Layout{}); err != nil {
				errs = append(errs, err)
			}
		}
	default:
		errs = append(errs, fmt.Errorf("native has no network %q (a host process is reached over loopback, a unix socket, or its own network namespace: host, unix, netns)", c.Network))
	}
	if c.Runtime != "" {
		errs = append(errs, fmt.Errorf("native has no OCI runtime (runtime=%s)", c.Runtime))
	}
	if err := checkTempDir(); err != nil {
		errs = append(errs, err)
	}
	if c.DBMS != nil {
		// The server binary and its system user: without either every run fails at start.
		if err := dbms.Missing(c.DBMS); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CgroupPath is the control group of one run: /boxbench/<experiment>/<run>.
func CgroupPath(experiment, run string) string {
	return "/boxbench/" + experiment + "/" + run
}

// Provision starts the server natively.
func (p *Platform) Provision(ctx context.Context, r platform.Request) (platform.Box, error) {
	b := &box{req: r, facts: map[string]string{"platform": Name}}
	if err := b.provision(ctx); err != nil {
		return nil, platform.Undo(ctx, b, err)
	}
	return b, nil
}

// ClusterRefuses: a unix socket cannot carry a cluster (platform.Clusterer).
func (*Platform) ClusterRefuses() map[string]string {
	return map[string]string{"unix": "its nodes talk to each other over TCP (use host)"}
}

// ClusterNetwork: native nodes share the host's network, or with network netns a bridge of the
// cluster's own (platform.Clusterer; netns.go).
func (*Platform) ClusterNetwork(ctx context.Context, r platform.Request) (string, func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	if r.Network != NetworkNetns {
		return "", none, nil
	}
	br, err := makeBridge(ctx, r.Experiment, r.Run)
	if err != nil {
		return "", none, err
	}
	return br.Name, func(ctx context.Context) error { return removeBridge(ctx, br.Name) }, nil
}

// Cleanup kills processes and removes cgroups, mounts, loop devices and directories of crashed
// experiments.
func (p *Platform) Cleanup(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	return platform.CleanupWith(ctx, p, workRoot, crashed)
}

// CleanupBoxes is Cleanup without its last step, the work root's mounts, loop devices and
// directories (platform.CleanupAll runs that once, after every platform's boxes).
func (*Platform) CleanupBoxes(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	var done []string
	var errs []error
	for _, ref := range cgroup.At("/boxbench").Children() {
		if !crashed(filepath.Base(ref.Path())) {
			continue
		}
		if err := killTree(ref); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := ref.Remove(); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, "cgroup "+ref.Path())
	}
	done = append(done, removeSocketDirs(ctx, workRoot, crashed)...)
	return done, errors.Join(errs...)
}

// removeSocketDirs removes the socket directories (runDirFor, under the temporary directory) and
// the network namespaces and bridges (netns.go) of a crashed experiment's boxes, found from
// their work directories before those are removed.
func removeSocketDirs(ctx context.Context, workRoot string, crashed func(string) bool) []string {
	var done []string
	runs, _ := filepath.Glob(filepath.Join(workRoot, "*", "*"))
	for _, run := range runs {
		exp := filepath.Base(filepath.Dir(run))
		if !crashed(exp) || !platform.ValidName(filepath.Base(run)) {
			continue
		}
		done = append(done, removeNetworks(ctx, exp, filepath.Base(run))...)
		dir := runDirFor(run)
		if ownSocketDir(dir) && os.RemoveAll(dir) == nil {
			done = append(done, "socket directory "+dir)
		}
	}
	return done
}

// sysUIDMax is the highest uid of a system account (Debian's SYS_UID_MAX): the database users
// a box's socket directory is given to are system accounts, a person's login never is.
const sysUIDMax = 999

// ownSocketDir says whether dir, a socket directory's name in the world-writable temporary
// directory, can be boxbench's: a real directory (not a link) owned by root, the user boxbench
// runs as, or a system account (the database's user, to whom provision gives it), not writable
// by others. A directory another user made at that predictable name is not boxbench's to remove.
func ownSocketDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o002 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && (st.Uid <= sysUIDMax || int(st.Uid) == os.Geteuid())
}

// killTree kills the processes of every run group under an experiment group.
func killTree(ref cgroup.Ref) error {
	var errs []error
	for _, c := range ref.Children() {
		errs = append(errs, killTree(c))
	}
	errs = append(errs, ref.Kill(cleanupKillTimeout))
	return errors.Join(errs...)
}
