package platform

import "testing"

// TestMarkerVocabulary: names and paths a marker may hold.
func TestMarkerVocabulary(t *testing.T) {
	for _, s := range []string{"quickstart-1a2b3c4d", "r0001", "r0001-nb-noisy", "seed-0a1b2c3d", "pt01", "a..b"} {
		if !ValidName(s) {
			t.Errorf("ValidName(%q) = false", s)
		}
	}
	for _, s := range []string{"", ".", "..", "../x", "a/b", "-r", "R1", "a b", "x\n"} {
		if ValidName(s) {
			t.Errorf("ValidName(%q) = true", s)
		}
	}
	for _, p := range []string{"/var/tmp/boxbench/e-1a2b3c4d/r0001/lxc", "/"} {
		if err := CanonicalAbs("f", p); err != nil {
			t.Errorf("CanonicalAbs(%q): %v", p, err)
		}
	}
	for _, p := range []string{"", "lxc", "/a/../b", "/..", "/a/.", "/a//b", "/a/", "/a/./b"} {
		if err := CanonicalAbs("f", p); err == nil {
			t.Errorf("CanonicalAbs(%q): no error", p)
		}
	}
}
