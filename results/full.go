package results

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
	"modernc.org/sqlite"
)

// sqliteFull is SQLite's result code for "database or disk is full" (SQLITE_FULL).
const sqliteFull = 13

// Full reports whether err says that the disk under the results was full: SQLite's
// SQLITE_FULL (its primary code, whatever the extended one) or ENOSPC from a plain write.
func Full(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqliteFull {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// DiskFull returns err unchanged unless it says the disk was full (Full); then it names path
// (the file being written) and the size and free space of its filesystem, so that the user
// knows which disk to free: SQLite's own "database or disk is full (13)" says neither.
func DiskFull(err error, path string) error {
	if err == nil || !Full(err) {
		return err
	}
	var st unix.Statfs_t
	if serr := unix.Statfs(filepath.Dir(path), &st); serr != nil {
		return fmt.Errorf("disk full writing %s: %w", path, err)
	}
	mib := func(blocks uint64) string { return fmt.Sprintf("%.1f MiB", float64(blocks)*float64(st.Bsize)/(1<<20)) }
	return fmt.Errorf("disk full writing %s (its filesystem holds %s, %s free): %w", path, mib(st.Blocks), mib(st.Bavail), err)
}
