package lxc

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/testkit/platformtest"
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

// TestMarkerRoundTrip: the marker a box writes (newBox's, bridged as provision makes it) is read
// back by cleanup at the place it was written, also when the work root was spelled through a
// link to it (LXC's lock tree then follows that spelling).
func TestMarkerRoundTrip(t *testing.T) {
	root := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	for _, spelled := range []string{root, root + "/", link} {
		for _, bridged := range []bool{false, true} {
			at := platform.Place{WorkRoot: root, Experiment: "rt-1a2b3c4d", Run: "r0001"}
			r := platform.Request{Experiment: at.Experiment, Run: at.Run, WorkDir: fmt.Sprintf("%s/%s/%s", spelled, at.Experiment, at.Run)}
			if err := os.MkdirAll(r.WorkDir, 0o755); err != nil {
				t.Fatal(err)
			}
			b := newBox(&Platform{}, r)
			if bridged {
				b.m = newMarker(r.Experiment, r.Run, b.m.LXCPath, true)
			}
			if err := b.m.write(r.WorkDir); err != nil {
				t.Fatal(err)
			}
			m, err := readMarker(filepath.Join(at.Dir(), markerFile), at)
			if err != nil || m != b.m {
				t.Errorf("work root spelled %s, bridged %v: read %+v, %v; want %+v", spelled, bridged, m, err, b.m)
			}
		}
	}
}
