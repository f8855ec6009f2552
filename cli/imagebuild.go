package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/platform"
)

// imageBuild builds databases' trees, images and the platforms' own images (vm's guest images),
// several databases at once. Output lines are whole lines (one writer at a time); their order
// is the order builds finish.
type imageBuild struct {
	store *image.Store
	// platforms build images of their own from each tree (the flags given: --vm).
	platforms []platform.ImageBuilder
	out       io.Writer
	warn      io.Writer
	mu        sync.Mutex // out, warn and errs
	errs      []error
}

// all builds ds, at most jobs at a time, and returns every failure (each names its database).
func (b *imageBuild) all(ctx context.Context, ds []dbms.DBMS, jobs int) []error {
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for _, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				b.fail(d, ctx.Err())
				return
			}
			defer func() { <-sem }()
			b.one(ctx, d)
		}()
	}
	wg.Wait()
	return b.errs
}

func (b *imageBuild) one(ctx context.Context, d dbms.DBMS) {
	// The tree first, also when the engine has the image: other platforms use it.
	tree, built, err := b.store.Rootfs.Get(ctx, d)
	if err != nil {
		b.fail(d, err)
		return
	}
	b.printf(b.out, "%-10s %s  %s %s  (%s)\n", d.Name(), tree.Dir, tree.ServerPackage, tree.ServerVersion, state(built))
	im, built, err := b.store.Build(ctx, d)
	if err != nil {
		b.fail(d, err)
		return
	}
	b.printf(b.out, "%-10s %s  %s %s  (%s)\n", d.Name(), im.Ref, im.ServerPackage, im.ServerVersion, state(built))
	if err := image.CheckNative(ctx, im); err != nil {
		b.printf(b.warn, "warning: %s: %v\n", d.Name(), err)
	}
	// Each platform's images are independent builds from the same tree: at once.
	var wg sync.WaitGroup
	for _, p := range b.platforms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.BuildImages(ctx, tree, func(line string, built bool, err error) {
				if err != nil {
					b.fail(d, err)
					return
				}
				b.printf(b.out, "%-10s %s (%s)\n", d.Name(), line, state(built))
			})
		}()
	}
	wg.Wait()
}

// imageFlag is a flag of `images build` that asks for platforms' own images, and the
// platforms that build them.
type imageFlag struct {
	name, usage string
	on          bool
	builders    []platform.ImageBuilder
}

// imageFlags are the flags of ps's image builders, in platform name order, each flag once.
func imageFlags(ps map[string]platform.Platform) []*imageFlag {
	var out []*imageFlag
	by := map[string]*imageFlag{}
	for _, n := range slices.Sorted(maps.Keys(ps)) {
		ib := ps[n].Info().Images
		if ib == nil {
			continue
		}
		name, usage := ib.ImageFlag()
		f := by[name]
		if f == nil {
			f = &imageFlag{name: name, usage: usage}
			by[name] = f
			out = append(out, f)
		}
		f.builders = append(f.builders, ib)
	}
	return out
}

func (b *imageBuild) printf(w io.Writer, format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(w, format, args...)
}

func (b *imageBuild) fail(d dbms.DBMS, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs = append(b.errs, fmt.Errorf("%s: %w", d.Name(), err))
}
