package runner

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/boxbench/boxbench/results"

	"golang.org/x/sys/unix"
)

// lockExperiment takes an exclusive lock on WORKROOT/locks/<id>.lock for the life of the
// experiment. A held lock tells cleanup that the experiment is alive, not crashed.
func lockExperiment(workRoot, id string) (func(), error) {
	dir := filepath.Join(workRoot, "locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Never through a link: the pid is written at the start of whatever the open reaches.
	f, err := os.OpenFile(filepath.Join(dir, id+".lock"), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("experiment %s is running in another boxbench process (lock %s held)", id, f.Name())
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
}

// Crashed reports whether experiment id has no live boxbench process holding its lock.
func Crashed(workRoot string) func(id string) bool {
	return func(id string) bool {
		if results.ValidExperimentID(id) != nil {
			return false // the work root's own directories, or not an experiment id at all
		}
		p := filepath.Join(workRoot, "locks", id+".lock")
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			return false // never locked under this work root: it may be alive under another
		}
		f, err := os.OpenFile(p, os.O_RDWR|unix.O_NOFOLLOW, 0)
		if err != nil {
			return false
		}
		defer f.Close()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			return false
		}
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return true
	}
}
