package plan

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/boxbench/boxbench/internal/prereq"
)

// A cell that waits for a command (an image not built) is planned as it will run, and its need
// is the plan's prerequisite once per command; a cell with a reason no command removes is
// skipped even when it waits for the same command; with every docker cell waiting, the plan
// still has cells (no "no cell of the matrix can run").
func TestPrerequisites(t *testing.T) {
	e := parse(t, src)
	image := prereq.Need{What: "postgresql's engine image is not built", Command: "boxbench images build --dbms postgresql",
		Takes: time.Minute, Basis: prereq.Typical}
	check := func(ctx context.Context, c *Cell) error {
		if err := noContainerLayer(ctx, c); err != nil {
			return err
		}
		if c.Platform != "docker" {
			return nil
		}
		err := error(prereq.New(image, errors.New("image not built")))
		if c.Storage == "blockdev" {
			return errors.Join(err, errors.New("docker has no blockdev here"))
		}
		return err
	}
	p, problems := Expand(context.Background(), e, 7, check)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	want, _ := Expand(context.Background(), e, 7, noContainerLayer)
	if render(p) != render(want) {
		t.Errorf("the plan with prerequisites differs from the plan without them:\n%s\nwant:\n%s", render(p), render(want))
	}
	if len(p.Prerequisites) != 1 || p.Prerequisites[0].Need != image {
		t.Fatalf("prerequisites %+v, want the image once", p.Prerequisites)
	}
	var docker int
	for _, c := range p.Cells {
		if c.Platform == "docker" {
			docker++
		}
	}
	if got := len(p.Prerequisites[0].Cells); got != docker || docker == 0 {
		t.Errorf("%d cells wait for the image, want every docker cell (%d)", got, docker)
	}
	err := p.Unmet()
	if err == nil || !strings.Contains(err.Error(), "`boxbench images build --dbms postgresql`") {
		t.Errorf("Unmet() = %v, want the command named", err)
	}
	if want.Unmet() != nil {
		t.Errorf("a plan without prerequisites is unmet: %v", want.Unmet())
	}

	// Every cell waits: the plan has them all, and nothing is skipped for it.
	all := func(context.Context, *Cell) error { return prereq.New(image, nil) }
	p, problems = Expand(context.Background(), parse(t, strings.Replace(src, "platform: [native, docker]", "platform: [docker]", 1)), 7, all)
	if len(problems) > 0 || len(p.Skipped) > 0 || len(p.Cells) == 0 || len(p.Prerequisites[0].Cells) != len(p.Cells) {
		t.Errorf("every cell waiting: %d cells, %d skipped, problems %v", len(p.Cells), len(p.Skipped), problems)
	}
}
