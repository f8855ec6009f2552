package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/boxbench/boxbench/internal/storage"
)

// reservedWorkDirs are the runner's own entries in the work root, never an experiment's.
var reservedWorkDirs = map[string]bool{"seeds": true, "locks": true}

// experimentRe is the shape of an experiment id (a spec name plus a random suffix, or a
// test's id): anything else in the work root is not ours to remove.
var experimentRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,80}$`)

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
		if !e.IsDir() || reservedWorkDirs[name] || !experimentRe.MatchString(name) || !crashed(name) {
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

// Marker is what a box writes into its work directory (workRoot/<experiment>/<run>) before it
// makes anything outside it, naming all it makes, so that a crashed experiment's box can be
// removed.
type Marker interface {
	// Place is the experiment and run the marker says it belongs to.
	Place() (experiment, run string)
	// Remove removes what the marker names (idempotent) and says what it removed.
	Remove(ctx context.Context) ([]string, error)
}

// WriteMarker writes m as JSON to the file named file in the box's work directory dir.
func WriteMarker(dir, file string, m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, file), b, 0o644)
}

// ReadMarker reads the JSON marker at path; own says whether everything it names is derived
// from its own experiment and run (a marker that names anything else is refused: boxbench never
// acts on what a file claims).
func ReadMarker[M any](path string, own func(M) bool) (M, error) {
	var m M
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	if !own(m) {
		return m, fmt.Errorf("%s: names that are not this box's", path)
	}
	return m, nil
}

// CleanupMarked removes the boxes of crashed experiments through their markers: every file
// named file two levels under workRoot that read accepts, whose experiment crashed and whose
// place is the directory it was found in (a marker naming another place is never acted on).
func CleanupMarked[M Marker](ctx context.Context, workRoot, file string, read func(path string) (M, error), crashed func(string) bool) ([]string, error) {
	var done []string
	var errs []error
	paths, _ := filepath.Glob(filepath.Join(workRoot, "*", "*", file))
	for _, path := range paths {
		m, err := read(path)
		if err != nil {
			continue // not ours to judge: unreadable, or names that are not its box's
		}
		exp, run := m.Place()
		if !crashed(exp) || filepath.Dir(path) != filepath.Join(workRoot, exp, run) {
			continue // alive, or a marker that names another place
		}
		gone, err := m.Remove(ctx)
		done = append(done, gone...)
		errs = append(errs, err)
	}
	return done, errors.Join(errs...)
}
