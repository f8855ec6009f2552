package vm

import (
	"context"
	"errors"
	"time"

	"github.com/boxbench/boxbench/internal/cgroup"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/hostnet"
)

// markerFile is written into a box's work directory before anything else is made, so that a
// crashed experiment's VM can be found and removed.
const markerFile = "vm-box.json"

// marker names everything a box makes outside its work directory. The QEMU process is found
// through its group, never by name or by a pid a file claims.
type marker struct {
	Experiment string `json:"experiment"`
	Run        string `json:"run"`
	Cgroup     string `json:"cgroup"` // "/boxbench/<exp>/<run>"
	Bridge     string `json:"bridge,omitempty"`
	Tap        string `json:"tap,omitempty"`
}

func newMarker(exp, run string, bridged bool) marker {
	m := marker{Experiment: exp, Run: run, Cgroup: "/boxbench/" + exp + "/" + run}
	if bridged {
		m.Bridge, m.Tap = hostnet.Name(hostnet.PrefixBridge, exp, run), hostnet.Name(hostnet.PrefixTap, exp, run)
	}
	return m
}

func (m marker) write(dir string) error { return platform.WriteMarker(dir, markerFile, m) }

// readMarker reads the marker found at at; every field must be what the box there derives.
func readMarker(path string, at platform.Place) (marker, error) {
	return platform.ReadMarker(path, at, func(m marker, at platform.Place) error {
		return platform.DerivedFields(m, newMarker(at.Experiment, at.Run, m.Bridge != ""))
	})
}

// killTimeout bounds the wait for a killed QEMU to leave its group: a VMM exits only once its
// in-flight native AIO has completed, which on a saturated disk takes many seconds.
const killTimeout = 60 * time.Second

func (m marker) group() cgroup.Ref { return cgroup.At(m.Cgroup) }

// Remove kills what is left in the box's group (the QEMU process, by pid) and removes the group,
// the tap and the bridge. Safe when some or all of it is already gone.
// Place: the experiment and run the marker names (platform.Marker).
func (m marker) Place() (string, string) { return m.Experiment, m.Run }

func (m marker) Remove(ctx context.Context) ([]string, error) {
	var done []string
	var errs []error
	ref := m.group()
	if ref.Exists() {
		if err := ref.Kill(killTimeout); err != nil {
			errs = append(errs, err)
		} else if err := ref.Remove(); err != nil {
			errs = append(errs, err)
		} else {
			done = append(done, "cgroup "+ref.Path())
		}
	}
	for _, link := range []string{m.Tap, m.Bridge} {
		if link == "" {
			continue
		}
		if err := hostnet.RemoveLink(ctx, link); err != nil {
			errs = append(errs, err)
		} else {
			done = append(done, "interface "+link)
		}
	}
	return done, errors.Join(errs...)
}
