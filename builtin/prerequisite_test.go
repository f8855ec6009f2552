package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/images/vmimage"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/lxc"
	"github.com/boxbench/boxbench/platform/native"
	"github.com/boxbench/boxbench/platform/vm"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// On a host whose caches hold no MariaDB image (an empty cache root of the test's own: the
// host's are never touched), the isolation study plans every cell as it will run, through each
// platform's own Check, and names the command that makes each image as its prerequisite; run's
// refusal (Plan.Unmet) names the same commands.
func TestPlanWaitsForImages(t *testing.T) {
	testenv.NeedCommands(t, "lxc-start", "qemu-system-x86_64", "qemu-img", "mkfs.ext4")
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		testenv.Skip(t, "no /dev/net/tun (the vm cells' bridge network)")
	}
	root := t.TempDir()
	trees := rootfs.NewCache(filepath.Join(root, "rootfs"), nil)
	guests := vmimage.Cache{Root: filepath.Join(root, "vm")}
	ps := map[string]platform.Platform{native.Name: native.New(), lxc.Name: lxc.New(trees, nil),
		vm.Name: vm.New(trees, guests, nil), vm.NameDocker: vm.NewDocker(trees, guests, nil)}
	data, err := os.ReadFile("../studies/isolation.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := spec.Parse(data, "isolation.yaml", Vocabulary(ps))
	if err != nil {
		t.Fatal(err)
	}
	p, problems := plan.Expand(context.Background(), e, 1, Checker(ps, false))
	if len(problems) > 0 {
		t.Fatalf("the study is refused: %v", problems)
	}
	all, _ := plan.Expand(context.Background(), e, 1, func(context.Context, *plan.Cell) error { return nil })
	if len(p.Skipped) > 0 || len(p.Cells) != len(all.Cells) {
		t.Errorf("%d of %d cells planned, skipped: %+v", len(p.Cells), len(all.Cells), p.Skipped)
	}
	want := map[string]bool{"boxbench images build --dbms mariadb": false, "boxbench images build --dbms mariadb --vm": false}
	for _, pr := range p.Prerequisites {
		if _, ok := want[pr.Command]; !ok {
			t.Errorf("unexpected prerequisite %s", pr)
		}
		want[pr.Command] = true
		if pr.Takes <= 0 || pr.Basis == "" || len(pr.Cells) == 0 {
			t.Errorf("prerequisite %s: no estimate or no cell", pr)
		}
		for _, c := range pr.Cells {
			if !strings.Contains(strings.Join(ps[c.Platform].Info().Setup, " "), "images") {
				t.Errorf("cell %s waits for %s, but its platform needs no image", c.ID, pr.Command)
			}
		}
	}
	for cmd, found := range want {
		if !found {
			t.Errorf("no prerequisite %q in %+v", cmd, p.Prerequisites)
		}
		if err := p.Unmet(); err == nil || !strings.Contains(err.Error(), "`"+cmd+"`") {
			t.Errorf("run's refusal %v does not name %q", err, cmd)
		}
	}
}
