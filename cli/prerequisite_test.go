package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform/lxc"
	"github.com/boxbench/boxbench/testkit/testenv"
)

// doctor on a host whose cache holds no tree (an empty cache root of the test's own): each
// database's line names `images build` with its estimate, and the prerequisites are listed
// once each at the end.
func TestDoctorPrerequisites(t *testing.T) {
	testenv.NeedCommands(t, "lxc-start")
	p := lxc.New(rootfs.NewCache(filepath.Join(t.TempDir(), "rootfs"), nil), nil)
	fs := p.Info().Diagnoser.Diagnose(context.Background(), databases.DBMSs())
	var b strings.Builder
	printFindings(&b, fs)
	out := b.String()
	_, list, ok := strings.Cut(out, "\nprerequisites (")
	if !ok {
		t.Fatalf("no prerequisites listed:\n%s", out)
	}
	for _, name := range databases.Names() {
		cmd := "boxbench images build --dbms " + name
		if !strings.Contains(out, "→ "+cmd+" (about ") {
			t.Errorf("%s's line does not give the command with its estimate:\n%s", name, out)
		}
		if strings.Count(list, "`"+cmd+"`") != 1 || !strings.Contains(list, name+"'s root filesystem is not built: `"+cmd+"` (about ") {
			t.Errorf("%s is not listed once among the prerequisites:\n%s", name, list)
		}
	}
}

// plan's output lists each prerequisite with its estimate and the cells that wait for it.
func TestPrintPrerequisites(t *testing.T) {
	cells := []*plan.Cell{{ID: "platform=lxc/storage=bind"}, {ID: "platform=lxc/storage=tmpfs"}}
	p := &plan.Plan{Cells: cells, Prerequisites: []plan.Prerequisite{
		{Need: prereq.Need{What: "mariadb's root filesystem is not built", Command: "boxbench images build --dbms mariadb",
			Takes: 2 * time.Minute, Basis: "its last build here took 2 min"}, Cells: cells},
	}}
	var b strings.Builder
	printPrerequisites(&b, p)
	want := "  mariadb's root filesystem is not built: `boxbench images build --dbms mariadb` (about 2 min, its last build here took 2 min)\n" +
		"    for 2 cell(s): platform=lxc/storage=bind, platform=lxc/storage=tmpfs\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("printed:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	printPrerequisites(&b, &plan.Plan{Cells: cells})
	if b.Len() != 0 {
		t.Errorf("a plan without prerequisites printed %q", b.String())
	}
}
