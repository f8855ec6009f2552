package docker

import (
	"strings"
	"testing"

	"github.com/docker/docker/api/types/system"

	"github.com/boxbench/boxbench/platform"
)

// registered is what dockerd 20.10 reports after scripts/setup.sh (docker info's Runtimes).
var registered = map[string]system.RuntimeWithStatus{
	"runc":       {Runtime: system.Runtime{Path: "runc"}},
	"crun":       {Runtime: system.Runtime{Path: "/usr/bin/crun"}},
	"runsc":      {Runtime: system.Runtime{Path: "/var/cache/boxbench/runsc/v0/runsc"}},
	"runsc-host": {Runtime: system.Runtime{Path: "/var/cache/boxbench/runsc/v0/runsc", Args: []string{"--network=host"}}},
	"runsc-flat": {Runtime: system.Runtime{Path: "/usr/local/bin/runsc", Args: []string{"--overlay2=none", "--network=none"}}},
}

func TestDescribeRuntime(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gvisor  bool
		net     string
		overlay bool
	}{
		{"runc", false, "", false},
		{"crun", false, "", false},
		{"runsc", true, "sandbox", true},
		{"runsc-host", true, "host", true},
		{"runsc-flat", true, "none", false},
		{"unknown", false, "", false},
	} {
		rt := describeRuntime(tc.name, registered)
		if rt.GVisor != tc.gvisor || rt.GVisorNet != tc.net || rt.GVisorRootOverlay != tc.overlay {
			t.Errorf("%s: %+v", tc.name, rt)
		}
	}
}

func TestRuntimeCheck(t *testing.T) {
	for _, tc := range []struct {
		rt   string
		c    platform.Choice
		want []string
	}{
		{"runc", platform.Choice{Storage: StorageOverlay, Network: NetworkHost}, nil},
		{"runsc", platform.Choice{Storage: StorageBind, Network: NetworkDirect}, nil},
		{"runsc", platform.Choice{Storage: StorageOverlay, Network: NetworkHost}, []string{"network host", "runsc-host", "storage overlay", "bind, volume, tmpfs, blockdev"}},
		{"runsc-host", platform.Choice{Storage: StorageVolume, Network: NetworkHost}, nil},
		{"runsc-host", platform.Choice{Storage: StorageBind, Network: NetworkPublished}, nil},
		{"runsc-flat", platform.Choice{Storage: StorageOverlay, Network: NetworkDirect}, []string{"--network=none"}},
		{"runsc-flat", platform.Choice{Storage: StorageOverlay, Network: NetworkHost}, nil},
	} {
		err := describeRuntime(tc.rt, registered).check(tc.c)
		if (err == nil) != (tc.want == nil) {
			t.Errorf("%s %+v: %v", tc.rt, tc.c, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %+v: %v does not say %q", tc.rt, tc.c, err, w)
			}
		}
	}
}

// TestRuntimeWarnings: every gVisor box says what gVisor changes; runc boxes say nothing.
func TestRuntimeWarnings(t *testing.T) {
	codes := func(name string) string {
		var cs []string
		for _, w := range describeRuntime(name, registered).warnings(platform.Choice{}) {
			cs = append(cs, w.Code)
		}
		return strings.Join(cs, ",")
	}
	for name, want := range map[string]string{
		"runc":       "",
		"runsc":      "gvisor_kernel,gvisor_files,gvisor_netstack",
		"runsc-host": "gvisor_kernel,gvisor_files,gvisor_host_network",
	} {
		if got := codes(name); got != want {
			t.Errorf("%s warnings %q, want %q", name, got, want)
		}
	}
	f := describeRuntime("runsc-host", registered).facts(false)
	if f["runtime_kind"] != "gvisor" || f["gvisor_network"] != "host" || f["runtime_args"] != "--network=host" || f["runtime_version"] != "" {
		t.Errorf("facts %v", f)
	}
}

func TestKataFinding(t *testing.T) {
	noVirt := "processor\t: 0\nflags\t\t: fpu vme de pse tsc msr pae hypervisor\n"
	f := kataFinding(registered, noVirt)
	if f == nil || f.OK || !strings.Contains(f.Detail, "no vmx or svm") {
		t.Errorf("no hardware virtualisation: %+v", f)
	}
	if f := kataFinding(registered, "flags\t\t: fpu vmx ept\n"); f == nil || !strings.Contains(f.Detail, "offers hardware virtualisation") {
		t.Errorf("vmx: %+v", f)
	}
	withKata := map[string]system.RuntimeWithStatus{"kata": {Runtime: system.Runtime{Type: "io.containerd.kata.v2"}}}
	if f := kataFinding(withKata, noVirt); f != nil {
		t.Errorf("a registered Kata runtime is probed, not reported here: %+v", f)
	}
}
