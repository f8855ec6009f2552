package lxc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostnet"
)

// markerFile is written into a box's work directory before anything else is made, so that a
// crashed experiment's container can be found and removed.
const markerFile = "lxc-box.json"

// marker names everything a box makes outside its work directory.
type marker struct {
	Experiment string `json:"experiment"`
	Run        string `json:"run"`
	Name       string `json:"name"`    // container name
	LXCPath    string `json:"lxcpath"` // absolute
	Cgroup     string `json:"cgroup"`  // "/boxbench/<exp>/<run>"
	Bridge     string `json:"bridge,omitempty"`
	Veth       string `json:"veth,omitempty"`
}

func (m marker) write(dir string) error { return platform.WriteMarker(dir, markerFile, m) }

// newMarker is the marker of the box of run in experiment exp whose container path is lxcpath
// (its work directory's "lxc"), with a bridge and veth when bridged.
func newMarker(exp, run, lxcpath string, bridged bool) marker {
	m := marker{Experiment: exp, Run: run, Name: "bb-" + run, LXCPath: lxcpath, Cgroup: "/boxbench/" + exp + "/" + run}
	if bridged {
		m.Bridge, m.Veth = hostnet.Name(hostnet.PrefixBridge, exp, run), hostnet.Name(hostnet.PrefixVeth, exp, run)
	}
	return m
}

func readMarker(path string, at platform.Place) (marker, error) {
	return platform.ReadMarker(path, at, marker.derived)
}

// derived checks every field of m against what the box at at derives. The container path is
// the work directory's "lxc" as the provision spelled it: absolute and canonical (no ".."), named
// "lxc", in a directory that is the very work directory the marker was found in (the same
// directory by another spelling of the work root, e.g. through a link to it, is accepted; its
// lock directory under lockRoot is that spelling's).
func (m marker) derived(at platform.Place) error {
	lxcpath := filepath.Join(at.Dir(), "lxc")
	if m.LXCPath != lxcpath {
		if err := platform.CanonicalAbs("lxcpath", m.LXCPath); err != nil {
			return err
		}
		if filepath.Base(m.LXCPath) != "lxc" || !sameDir(filepath.Dir(m.LXCPath), at.Dir()) {
			return fmt.Errorf("lxcpath %q is not the lxc directory of the work directory %s (valid: %q)", m.LXCPath, at.Dir(), lxcpath)
		}
		lxcpath = m.LXCPath
	}
	return platform.DerivedFields(m, newMarker(at.Experiment, at.Run, lxcpath, m.Bridge != ""))
}

// sameDir says whether a and b are the same existing directory.
func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil || !fa.IsDir() {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// groups are the container's and its monitor's control groups.
func (m marker) groups() []cgroup.Ref {
	return []cgroup.Ref{cgroup.At(m.Cgroup), cgroup.At(m.Cgroup + ".monitor")}
}

// lockRoot is where LXC keeps its per-container locks, in directories that mirror each
// container path; it leaves them behind, and the lock itself when its monitor is killed.
const lockRoot = "/run/lxc/lock"

// removeLocks removes LXC's lock directory of the box's container path (nothing else uses it)
// and then its parents while they are empty.
func (m marker) removeLocks() error {
	if err := platform.CanonicalAbs("lxcpath", m.LXCPath); err != nil {
		return err // never joined onto lockRoot: it could name a directory outside it
	}
	dir := lockRoot + m.LXCPath
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for d := filepath.Dir(dir); d != lockRoot && strings.HasPrefix(d, lockRoot+"/"); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break // not empty: another container's, or another experiment's
		}
	}
	return nil
}

// Remove kills what is left in the box's groups (by pid) and removes the groups, the box's
// interfaces and LXC's lock file. Safe when some or all of it is already gone.
// Place: the experiment and run the marker names (platform.Marker).
func (m marker) Place() (string, string) { return m.Experiment, m.Run }

func (m marker) Remove(ctx context.Context) ([]string, error) {
	var done []string
	var errs []error
	for _, ref := range m.groups() {
		if !ref.Exists() {
			continue
		}
		if err := ref.Kill(10 * time.Second); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := ref.Remove(); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, "cgroup "+ref.Path())
	}
	for _, link := range []string{m.Veth, m.Bridge} {
		if link == "" {
			continue
		}
		if err := hostnet.RemoveLink(ctx, link); err != nil {
			errs = append(errs, err)
		} else {
			done = append(done, "interface "+link)
		}
	}
	errs = append(errs, m.removeLocks())
	return done, errors.Join(errs...)
}

// Leftovers: platform.LeftoverLister. LXC's lock directory of the experiment's container
// paths, which LXC leaves behind when a monitor is killed (removeLocks removes it).
func (p *Platform) Leftovers(_ context.Context, workRoot, exp string) ([]string, error) {
	if dir := filepath.Join(lockRoot, workRoot, exp); fileExists(dir) {
		return []string{"LXC lock directory " + dir}, nil
	}
	return nil, nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
