package cli

import (
	"testing"

	"github.com/boxbench/boxbench/builtin"
)

// TestPlatformCapabilities: `images build`'s flags and doctor's host findings come from the
// platforms of the build (platform.ImageBuilder, platform.HostChecker), each shared one once:
// vm and vm-docker give one --vm that builds both variants, and one kvm finding.
func TestPlatformCapabilities(t *testing.T) {
	ps := builtin.Platforms(nil)
	fs := imageFlags(ps)
	if len(fs) != 1 || fs[0].name != "vm" || len(fs[0].builders) != 2 || fs[0].usage == "" {
		t.Errorf("image flags %+v, want one --vm of two builders", fs)
	}
	hs := hostFindings(ps)
	if len(hs) != 1 || hs[0].Area != "host" || hs[0].Name != "kvm" {
		t.Errorf("host findings %+v, want one kvm finding", hs)
	}
}
