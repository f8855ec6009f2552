package hostnet

import (
	"context"
	"testing"
)

func TestUsedSubnets(t *testing.T) {
	out := "1: lo    inet 127.0.0.1/8 scope host lo\n5: bbx1    inet 10.213.1.1/24 scope global bbx1\n6: eth0    inet 10.213.300.1/24\n"
	got := usedSubnets(out)
	if !got[1] || len(got) != 1 {
		t.Errorf("used = %v, want {1}", got)
	}
}

func TestName(t *testing.T) {
	br := Name(PrefixBridge, "an-experiment-with-a-long-name-1234abcd", "r0001")
	tap := Name(PrefixTap, "an-experiment-with-a-long-name-1234abcd", "r0001")
	if len(br) > 15 || len(tap) > 15 || br[3:] != tap[3:] || br == Name(PrefixBridge, "an-experiment-with-a-long-name-1234abcd", "r0002") {
		t.Errorf("names %q %q", br, tap)
	}
}

// TestRemoveLinkRefusesOthers: only an interface name of boxbench's shape is ever removed.
func TestRemoveLinkRefusesOthers(t *testing.T) {
	for _, name := range []string{"lo", "eth0", "docker0", "bbx123", "bbx0123456789", "-h", "bbx0123abcd\n", "bbX0123abcd"} {
		if err := RemoveLink(context.Background(), name); err == nil {
			t.Errorf("RemoveLink(%q): no error", name)
		}
	}
}
