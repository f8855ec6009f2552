package cli

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/images/vmimage"
)

// imageBuild builds databases' trees, images and (vm) guest images, several databases at once.
// Output lines are whole lines (one writer at a time); their order is the order builds finish.
type imageBuild struct {
	store *image.Store
	vm    bool
	out   io.Writer
	warn  io.Writer
	mu    sync.Mutex // out, warn and errs
	errs  []error
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
	if !b.vm {
		return
	}
	// The two variants are independent builds from the same tree: at once.
	var wg sync.WaitGroup
	for _, variant := range []string{vmimage.Plain, vmimage.Docker} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, built, err := vmimage.Cache{}.Get(ctx, tree, variant)
			if err != nil {
				b.fail(d, err)
				return
			}
			b.printf(b.out, "%-10s %s  kernel %s %s (%s)\n", d.Name(), g.Disk, g.KernelVersion, g.DockerImage, state(built))
		}()
	}
	wg.Wait()
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
