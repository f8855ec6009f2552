package lxc

import (
	"testing"

	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/platformtest"
)

// TestHostileMarkers: an LXC marker is acted on only when every field is what the box at its
// place derives; a container path with ".." (which reached os.RemoveAll through LXC's lock
// tree), a group, a bridge or a name that is not the box's, is refused, and nothing it names
// is touched.
func TestHostileMarkers(t *testing.T) {
	valid := func(at platform.Place) marker { return newMarker(at.Experiment, at.Run, at.Dir()+"/lxc", false) }
	platformtest.HostileMarkers(t, platformtest.MarkerCase{
		File:    markerFile,
		Cleanup: (&Platform{}).CleanupBoxes,
		Valid:   func(at platform.Place) any { return valid(at) },
		Hostile: map[string]func(platform.Place, platformtest.Canaries) any{
			"lxcpath through ..": func(at platform.Place, c platformtest.Canaries) any {
				m := valid(at)
				m.LXCPath = "/../../.." + c.Dir
				return m
			},
			"lxcpath up from the work directory": func(at platform.Place, c platformtest.Canaries) any {
				m := valid(at)
				m.LXCPath = at.Dir() + "/../../../../../../../.." + c.Dir
				return m
			},
			"lxcpath elsewhere": func(at platform.Place, c platformtest.Canaries) any {
				m := valid(at)
				m.LXCPath = c.Dir
				return m
			},
			"lxcpath relative": func(at platform.Place, c platformtest.Canaries) any {
				m := valid(at)
				m.LXCPath = "lxc"
				return m
			},
			"cgroup outside /boxbench": func(at platform.Place, c platformtest.Canaries) any {
				m := valid(at)
				m.Cgroup = c.Group
				return m
			},
			"cgroup through ..": func(at platform.Place, c platformtest.Canaries) any {
				m := valid(at)
				m.Cgroup = "/boxbench/" + at.Experiment + "/../../" + c.Group
				return m
			},
			"bridge not the box's": func(at platform.Place, c platformtest.Canaries) any {
				m := newMarker(at.Experiment, at.Run, at.Dir()+"/lxc", true)
				m.Bridge = c.Link
				return m
			},
			"veth not the box's": func(at platform.Place, c platformtest.Canaries) any {
				m := newMarker(at.Experiment, at.Run, at.Dir()+"/lxc", true)
				m.Veth = c.Link
				return m
			},
			"name not the box's": func(at platform.Place, c platformtest.Canaries) any {
				m := valid(at)
				m.Name = "bb-../../x"
				return m
			},
		},
	})
}

// TestCanonicalLockDir: the lock directory is only ever under lockRoot.
func TestCanonicalLockDir(t *testing.T) {
	for _, p := range []string{"/../../tmp", "/a/../b", "relative", "/a/./b", "/a//b", "/a/"} {
		if err := (marker{LXCPath: p}).removeLocks(); err == nil {
			t.Errorf("removeLocks with lxcpath %q: no error", p)
		}
	}
}
