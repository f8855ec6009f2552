package builtin

import (
	"context"
	"slices"

	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/spec"
)

// Setup is what one experiment needs installed and built on this host: the steps of
// scripts/setup.sh and the databases whose images `boxbench images build` makes.
type Setup struct {
	// Steps of scripts/setup.sh, sorted: every platform's own (platform.Info.Setup), each
	// database's (named as the database), "tools" (the workloads' and neighbours' programs,
	// blockdev's xfs) and "runtimes" when a cell names an OCI runtime.
	Steps []string
	// Images are the databases of cells on platforms whose boxes are made from a root
	// filesystem (the step "images"), sorted; ImageFlags the flags of `images build` that the
	// cells' platforms ask for their own images (platform.Info.Images: "vm").
	Images, ImageFlags []string
}

// SetupOf is what e's cells need on this host, whether or not it has them (the planner says
// that): every cell of the matrix counts, none is checked.
func SetupOf(ctx context.Context, ps map[string]platform.Platform, e *spec.Experiment) Setup {
	p, _ := plan.Expand(ctx, e, 0, func(context.Context, *plan.Cell) error { return nil })
	var s Setup
	if p == nil {
		return s
	}
	add := func(xs *[]string, x string) {
		if !slices.Contains(*xs, x) {
			*xs = append(*xs, x)
		}
	}
	add(&s.Steps, "tools")
	for _, c := range p.Cells {
		add(&s.Steps, c.DBMS)
		if c.Runtime != "" {
			add(&s.Steps, "runtimes")
		}
		pf := ps[c.Platform]
		if pf == nil {
			continue
		}
		info := pf.Info()
		for _, st := range info.Setup {
			add(&s.Steps, st)
			if st == "images" {
				add(&s.Images, c.DBMS)
			}
		}
		if ib := info.Images; ib != nil {
			name, _ := ib.ImageFlag()
			add(&s.ImageFlags, name)
		}
	}
	slices.Sort(s.Steps)
	slices.Sort(s.Images)
	slices.Sort(s.ImageFlags)
	return s
}
