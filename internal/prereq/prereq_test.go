package prereq

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var (
	image = Need{What: "mariadb's root filesystem is not built", Command: "boxbench images build --dbms mariadb",
		Takes: 130 * time.Second, Basis: Typical}
	pkg = Need{What: "redis is not installed on this host", Command: "apt-get install -y redis-server"}
)

func TestSplit(t *testing.T) {
	notBuilt := errors.New("root filesystem not built")
	hard := errors.New("the kernel has no overlayfs")
	for _, tc := range []struct {
		name  string
		err   error
		needs []Need
		hard  bool
	}{
		{"nil", nil, nil, false},
		{"a need", New(image, notBuilt), []Need{image}, false},
		{"wrapped", fmt.Errorf("docker bind/host: %w", New(image, notBuilt)), []Need{image}, false},
		{"joined needs", errors.Join(New(image, notBuilt), New(pkg, nil)), []Need{image, pkg}, false},
		{"joined with nils", errors.Join(nil, New(pkg, nil), nil), []Need{pkg}, false},
		{"nested joins", errors.Join(errors.Join(New(image, nil)), fmt.Errorf("x: %w", New(pkg, nil))), []Need{image, pkg}, false},
		{"a need beside a hard reason", errors.Join(New(image, notBuilt), hard), []Need{image}, true},
		{"a hard reason", hard, nil, true},
		{"a wrapped hard reason", fmt.Errorf("lxc: %w", hard), nil, true},
		{"a wrap of a need and a hard reason", fmt.Errorf("lxc: %w", errors.Join(New(image, nil), hard)), nil, true},
		{"the need's own cause is not looked into", New(image, errors.Join(hard, New(pkg, nil))), []Need{image}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needs, rest := Split(tc.err)
			if fmt.Sprint(needs) != fmt.Sprint(tc.needs) {
				t.Errorf("needs %v, want %v", needs, tc.needs)
			}
			if (rest != nil) != tc.hard {
				t.Errorf("rest %v, want hard %v", rest, tc.hard)
			}
			if rest != nil && rest != tc.err {
				t.Errorf("rest %v is not the error itself", rest)
			}
		})
	}
}

func TestError(t *testing.T) {
	notBuilt := errors.New("root filesystem not built")
	e := New(image, notBuilt)
	if !errors.Is(e, notBuilt) {
		t.Error("the need's error does not wrap its cause")
	}
	if got := e.Error(); got != "root filesystem not built: run `boxbench images build --dbms mariadb`" {
		t.Errorf("Error() = %q", got)
	}
	if got := New(pkg, fmt.Errorf("redis-server missing: %s", pkg.Command)).Error(); strings.Count(got, pkg.Command) != 1 {
		t.Errorf("the command is named twice or not at all: %q", got)
	}
	if got := New(pkg, nil).Error(); got != "redis is not installed on this host: `apt-get install -y redis-server`" {
		t.Errorf("Error() without a cause = %q", got)
	}
}

func TestString(t *testing.T) {
	if got, want := image.String(), "mariadb's root filesystem is not built: `boxbench images build --dbms mariadb` (about 2 min, typical on a 2-vCPU host)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for d, want := range map[time.Duration]string{time.Second: "10 s", 44 * time.Second: "40 s", 89 * time.Second: "90 s",
		90 * time.Second: "2 min", 5*time.Minute + 20*time.Second: "5 min"} {
		if got := About(d); got != want {
			t.Errorf("About(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestJoinMerge(t *testing.T) {
	needs, rest := Split(Join([]Need{image, pkg}))
	if rest != nil || len(needs) != 2 {
		t.Fatalf("Split(Join) = %v, %v", needs, rest)
	}
	if Join(nil) != nil {
		t.Error("Join of no needs is not nil")
	}
	other := image
	other.Takes = time.Hour
	if got := Merge([]Need{image, pkg}, []Need{other, pkg}); len(got) != 2 || got[0].Takes != image.Takes {
		t.Errorf("Merge = %v, want each command once, first seen", got)
	}
}
