package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/boxbench/boxbench/storage"
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
