package image

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/dbms/postgresql"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// TestTag: images keep the tag scheme they had before trees were cached, so existing images
// still match: boxbench/<dbms>:<first 16 hex digits of the recipe hash>.
func TestTag(t *testing.T) {
	var pg dbms.DBMS = postgresql.PostgreSQL{}
	r := rootfs.NewRecipe(pg, "bookworm", []rootfs.Source{{URI: "http://mirror.example.invalid/debian", Suite: "bookworm"}}, nil)
	if tag := Tag(r); tag != "boxbench/postgresql:"+r.Hash()[:16] {
		t.Errorf("tag %q", tag)
	}
}

func TestCheckNativeMismatch(t *testing.T) {
	if _, err := rootfs.HostVersion(context.Background(), "dpkg"); err != nil {
		testenv.Skip(t, "not a Debian host: "+err.Error())
	}
	host, _ := rootfs.HostVersion(context.Background(), "dpkg")
	im := Image{Ref: "x", DBMS: "x", ServerPackage: "dpkg", ServerVersion: host}
	if err := CheckNative(context.Background(), im); err != nil {
		t.Errorf("same version: %v", err)
	}
	im.ServerVersion = "0.0-fake"
	if err := CheckNative(context.Background(), im); !errors.Is(err, ErrVersionMismatch) ||
		!strings.Contains(err.Error(), host) || !strings.Contains(err.Error(), "0.0-fake") {
		t.Errorf("different version: %v", err)
	}
	im.ServerPackage = "boxbench-no-such-package"
	if err := CheckNative(context.Background(), im); !errors.Is(err, ErrVersionMismatch) {
		t.Errorf("missing package: %v", err)
	}
}

// TestAgentNeedsStaticBinary: an agent image has no C library, so a dynamically linked binary
// is refused with the reason, before the engine is asked anything.
func TestAgentNeedsStaticBinary(t *testing.T) {
	s := &Store{}
	_, err := s.BuildAgent(context.Background(), "/bin/sh", "test")
	if err == nil || !strings.Contains(err.Error(), "dynamically linked") || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("dynamic /bin/sh: %v", err)
	}
	_, err = s.BuildAgent(context.Background(), "/etc/passwd", "test")
	if err == nil {
		t.Error("a file that is not an executable was accepted")
	}
}
