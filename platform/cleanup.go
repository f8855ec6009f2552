package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/internal/storage"
)

// reservedWorkDirs are the runner's own entries in the work root, never an experiment's.
var reservedWorkDirs = map[string]bool{"seeds": true, "locks": true}

// CleanupWorkRoot removes what crashed experiments left under workRoot, for platforms whose
// boxes keep their storage and work directories there: mounts and loop devices first
// (storage.Leftovers), then workRoot/<experiment>. It returns what it removed.
func CleanupWorkRoot(ctx context.Context, workRoot string, crashed func(string) bool) ([]string, error) {
	if workRoot == "" {
		return nil, nil
	}
	done, err := storage.Leftovers(ctx, workRoot, func(path string) bool {
		rel, _ := filepath.Rel(workRoot, path)
		return !crashed(strings.SplitN(rel, string(filepath.Separator), 2)[0])
	})
	gone, err2 := removeWorkDirs(workRoot, crashed)
	return append(done, gone...), errors.Join(err, err2)
}

// removeWorkDirs removes workRoot/<experiment> of every crashed experiment. A directory that
// still has a mount under it is left alone (a recursive delete through a mount would reach what
// the mount shows).
func removeWorkDirs(workRoot string, crashed func(string) bool) ([]string, error) {
	ents, err := os.ReadDir(workRoot)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var done []string
	var errs []error
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || reservedWorkDirs[name] || !ValidName(name) || !crashed(name) {
			continue
		}
		dir := filepath.Join(workRoot, name)
		if storage.MountedUnder(dir) {
			errs = append(errs, fmt.Errorf("not removing %s: something is still mounted under it", dir))
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, "work directory "+dir)
	}
	return done, errors.Join(errs...)
}

// Removed is one thing CleanupAll removed, and the platform that removed it ("" for the
// shared work-root step).
type Removed struct{ Platform, What string }

// CleanupAll removes what crashed experiments left, for every platform of ps: first each
// platform's own boxes (BoxCleaner.CleanupBoxes, or the whole Cleanup of a platform without
// it), in name order, then the work root's mounts, loop devices and directories, once. Calling
// the platforms' Cleanup one after the other instead would let the first one unmount and
// remove what another platform's orphaned server still uses or is found from.
func CleanupAll(ctx context.Context, ps map[string]Platform, workRoot string, crashed func(string) bool) ([]Removed, error) {
	names := make([]string, 0, len(ps))
	for name := range ps {
		names = append(names, name)
	}
	slices.Sort(names)
	var done []Removed
	var errs []error
	for _, name := range names {
		var gone []string
		var err error
		if bc := ps[name].Info().BoxCleaner; bc != nil {
			gone, err = bc.CleanupBoxes(ctx, workRoot, crashed)
		} else {
			gone, err = ps[name].Cleanup(ctx, workRoot, crashed)
		}
		for _, g := range gone {
			done = append(done, Removed{Platform: name, What: g})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	gone, err := CleanupWorkRoot(ctx, workRoot, crashed)
	for _, g := range gone {
		done = append(done, Removed{What: g})
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("work root: %w", err))
	}
	return done, errors.Join(errs...)
}

// CleanupWith is the Cleanup of a platform that is a BoxCleaner: its boxes, then the work root.
func CleanupWith(ctx context.Context, bc BoxCleaner, workRoot string, crashed func(string) bool) ([]string, error) {
	done, err := bc.CleanupBoxes(ctx, workRoot, crashed)
	gone, err2 := CleanupWorkRoot(ctx, workRoot, crashed)
	return append(done, gone...), errors.Join(err, err2)
}
