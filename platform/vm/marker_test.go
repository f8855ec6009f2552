package vm

import (
	"testing"

	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/platformtest"
)

// TestHostileMarkers: a VM marker is acted on only when every field is what the box at its place
// derives; a group, a tap or a bridge that is not the box's is refused, and nothing it names is
// touched.
func TestHostileMarkers(t *testing.T) {
	bridged := func(at platform.Place) marker { return newMarker(at.Experiment, at.Run, true) }
	platformtest.HostileMarkers(t, platformtest.MarkerCase{
		File:    markerFile,
		Cleanup: (&Platform{}).CleanupBoxes,
		Valid:   func(at platform.Place) any { return newMarker(at.Experiment, at.Run, false) },
		Hostile: map[string]func(platform.Place, platformtest.Canaries) any{
			"cgroup outside /boxbench": func(at platform.Place, c platformtest.Canaries) any {
				m := newMarker(at.Experiment, at.Run, false)
				m.Cgroup = c.Group
				return m
			},
			"cgroup through ..": func(at platform.Place, c platformtest.Canaries) any {
				m := newMarker(at.Experiment, at.Run, false)
				m.Cgroup = "/boxbench/" + at.Experiment + "/" + at.Run + "/../../.." + c.Group
				return m
			},
			"bridge not the box's": func(at platform.Place, c platformtest.Canaries) any {
				m := bridged(at)
				m.Bridge = c.Link
				return m
			},
			"tap not the box's": func(at platform.Place, c platformtest.Canaries) any {
				m := bridged(at)
				m.Tap = c.Link
				return m
			},
			"tap without a bridge": func(at platform.Place, c platformtest.Canaries) any {
				m := bridged(at)
				m.Bridge = ""
				return m
			},
		},
	})
}
