package results

// How a results file is opened. SQLite (modernc.org/sqlite) opens by path, so the path it is
// given must lead to the file boxbench checked and nowhere else:
//
//   - the directory is an open descriptor (ownfs.Dir), and SQLite is given
//     /proc/self/fd/N/results.db; the kernel resolves that link to the directory itself.
//     SQLite then makes the name absolute by resolving links (its unixFullPathname), i.e. the
//     directory's current path, and opens results.db (and results.db-wal, -shm, -journal)
//     beside it;
//   - before it opens, results.db and those three names are checked to be absent or regular
//     files (lstat: a link, a FIFO, a device or a directory is refused, never opened), and
//     results.db is opened by boxbench itself (O_NOFOLLOW|O_NONBLOCK, fstat on the
//     descriptor): that is the inode checked;
//   - after SQLite opened it, the file SQLite names as its main database (PRAGMA
//     database_list) is lstat'ed: a regular file with the checked inode's device and number,
//     or the store is closed before a byte is written or read as data (sameFile).
//
// A writer's directory is one run claimed (Claim: root's or the user's, not writable by group
// or others), so nobody else can swap a name between the check and SQLite's open. A reader's
// may be anyone's, or on read-only media: when no -wal file is beside the results file and the
// directory is trusted (only root or the user can change it), it is opened with
// mode=ro&immutable=1 (SQLite then writes nothing, opens nothing beside it and takes
// no locks, which read-only media need). With a -wal file, committed runs may be in it alone,
// which immutable would not see, and a reader of a WAL database writes its -shm (even
// mode=ro; and a read-only -shm is not read-only to root): the results file and its -wal,
// opened and checked as above, are copied into a private temporary directory and read there
// (openCopy), so nothing beside the evidence is written. So is a file in a directory others
// can write (see trusted).

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/ownfs"
	"github.com/boxbench/boxbench/internal/safefile"
)

// sideNames are the files SQLite opens beside the results file.
var sideNames = []string{FileName + "-wal", FileName + "-shm", FileName + "-journal"}

// checkSides refuses a -wal, -shm or -journal name that is not a regular file.
func checkSides(d *ownfs.Dir) error {
	for _, n := range sideNames {
		what, err := d.NotRegular(n)
		if err != nil {
			return err
		}
		if what != "" {
			return fmt.Errorf("%s is %s, not a regular file: SQLite would open it beside %s; nothing was opened (valid: remove it)", d.Join(n), what, FileName)
		}
	}
	return nil
}

// sameFile checks that the main database SQLite opened is f's inode, reached without a link.
func sameFile(db *sql.DB, f *os.File) error {
	var seq int
	var name, file string
	if err := db.QueryRow(`PRAGMA database_list`).Scan(&seq, &name, &file); err != nil {
		return fmt.Errorf("open %s: %w", f.Name(), err)
	}
	var got, want unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &want); err != nil {
		return err
	}
	if err := unix.Lstat(file, &got); err != nil {
		return fmt.Errorf("open %s: SQLite's file %s: %w", f.Name(), file, err)
	}
	if got.Mode&unix.S_IFMT != unix.S_IFREG || got.Dev != want.Dev || got.Ino != want.Ino {
		return fmt.Errorf("open %s: the file changed while it was opened (SQLite opened %s, not the file checked); nothing was written", f.Name(), file)
	}
	return nil
}

// OpenIn opens (creating if needed) results.db in the directory d for writing; d stays the
// caller's (a claimed --out, or Open's).
func OpenIn(d *ownfs.Dir) (*Store, error) {
	path := d.Join(FileName)
	if err := checkSides(d); err != nil {
		return nil, err
	}
	f, err := d.OpenRegular(FileName, unix.O_RDWR)
	if errors.Is(err, os.ErrNotExist) {
		f, err = d.Create(FileName, 0o644)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	empty, err := checkHeader(f)
	if err != nil {
		return nil, err
	}
	if !empty {
		// Checked read-only first: a foreign database must not be touched (its journal mode
		// is changed by the writer's first statement).
		ro, err := openVerified(d, f, "mode=ro")
		if err != nil {
			return nil, err
		}
		_, err = checkSchema(ro, path)
		ro.Close()
		if err != nil {
			return nil, err
		}
	}
	db, err := openVerified(d, f, "_pragma=synchronous(FULL)")
	if err != nil {
		return nil, err
	}
	// WAL and synchronous=FULL: a committed run survives a crash or a power cut.
	if _, err := db.Exec(`PRAGMA journal_mode=WAL`); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := migrate(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: migrate to results schema %s: %w", path, SchemaVersion, err)
	}
	return &Store{db: db, path: path}, nil
}

// openVerified opens the results file of d with SQLite (one connection, URI parameters
// params) and checks that it opened f.
func openVerified(d *ownfs.Dir, f *os.File, params string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+d.ProcPath(FileName)+"?_pragma=busy_timeout(10000)&"+params)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	if err := sameFile(db, f); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// OpenReadOnly opens the results file in dir for reading. Nothing in it or beside it is
// written: not a migration (a file of schema 1 or 2 is read through a temporary view, oldRunsView), not
// the journal mode. A results.db that is a link, a FIFO, a device or a directory is refused
// before it is opened; read-only media and a directory of another user can be read.
func OpenReadOnly(dir string) (*Store, error) {
	d, err := ownfs.OpenDir(dir)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return nil, fmt.Errorf("%s is not an experiment directory: %w", dir, err)
		}
		return nil, err
	}
	s, err := openReadOnly(d)
	if err != nil {
		d.Close()
		return nil, err
	}
	s.dir = d
	return s, nil
}

func openReadOnly(d *ownfs.Dir) (*Store, error) {
	path := d.Join(FileName)
	if _, ok, err := d.Lstat(FileName); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("%s is not an experiment directory: no %s in it", d.Path(), FileName)
		}
		return nil, err
	}
	if err := checkSides(d); err != nil {
		return nil, err
	}
	f, err := d.OpenRegular(FileName, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	empty, err := checkHeader(f)
	if err != nil {
		return nil, err
	}
	if empty {
		return nil, fmt.Errorf("%s is empty: no experiment is stored in it", path)
	}
	_, wal, err := d.Lstat(FileName + "-wal")
	if err != nil {
		return nil, err
	}
	var db *sql.DB
	var copyDir string
	if !wal && trusted(d) {
		db, err = openVerified(d, f, "mode=ro&immutable=1")
	} else {
		db, copyDir, err = openCopy(d, f, wal)
	}
	if err != nil {
		return nil, err
	}
	_, err = checkSchema(db, path)
	if err == nil {
		err = viewOldRuns(db, path)
	}
	if err == nil {
		// After the view (which query_only would refuse): no statement of the store writes.
		_, err = db.Exec(`PRAGMA query_only = 1`)
	}
	if err != nil {
		db.Close()
		if copyDir != "" {
			os.RemoveAll(copyDir)
		}
		return nil, err
	}
	return &Store{db: db, path: path, copyDir: copyDir}, nil
}

// viewOldRuns shows the runs of a file of schema 1 or 2 with schema 3's columns, in memory
// (oldRunsView).
func viewOldRuns(db *sql.DB, path string) error {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s holds no experiment (no runs table)", path)
	}
	have, err := columns(db, "runs")
	if err != nil {
		return err
	}
	if view := oldRunsView(have); view != "" {
		if _, err := db.Exec(view); err != nil {
			return fmt.Errorf("read an older results schema: %w", err)
		}
	}
	return nil
}

// trusted says whether only root or the user running boxbench can change names in d: then
// nobody else can swap results.db between the checks and SQLite's own open by path. In a
// directory others can write, a FIFO swapped in there would block SQLite's open before
// sameFile could refuse it, so such a file is read from a copy (openCopy) made from the
// descriptor boxbench checked.
func trusted(d *ownfs.Dir) bool {
	st, err := d.Stat()
	if err != nil || !slices.Contains(safefile.InvokingUsers(), st.Uid) || st.Mode&0o022 != 0 {
		return false
	}
	// SQLite walks the directory's path: each parent must be as safe (a sticky one, such as
	// /tmp, lets nobody rename another's entry).
	p, err := d.RealPath()
	if err != nil {
		return false
	}
	for p = filepath.Dir(p); ; p = filepath.Dir(p) {
		var ps unix.Stat_t
		if unix.Stat(p, &ps) != nil || !slices.Contains(safefile.InvokingUsers(), ps.Uid) ||
			(ps.Mode&0o022 != 0 && ps.Mode&unix.S_ISVTX == 0) {
			return false
		}
		if p == "/" {
			return true
		}
	}
}

// openCopy copies the checked results file f and, when wal, its -wal into a new private
// directory and opens the copy read-only; the directory is removed with the store. The -wal is copied first:
// a checkpoint between the two copies then leaves the file at least as new as the -wal's frames,
// whose last version of each page is what the checkpoint wrote. A -wal whose header changed
// while it was copied (its writer restarted it) is copied again, up to three times.
func openCopy(d *ownfs.Dir, f *os.File, wal bool) (*sql.DB, string, error) {
	tmp, err := os.MkdirTemp("", "boxbench-read-")
	if err != nil {
		return nil, "", fmt.Errorf("copy %s to read its -wal: %w", f.Name(), err)
	}
	fail := func(err error) (*sql.DB, string, error) {
		os.RemoveAll(tmp)
		return nil, "", fmt.Errorf("copy %s to read its -wal: %w", f.Name(), err)
	}
	if !wal {
		if err := copyTo(filepath.Join(tmp, FileName), f); err != nil {
			return fail(err)
		}
	}
	for try := 0; wal; try++ {
		w, err := d.OpenRegular(FileName+"-wal", unix.O_RDONLY)
		if err != nil {
			return fail(err)
		}
		head := walHeader(w)
		err = copyTo(filepath.Join(tmp, FileName+"-wal"), w)
		if err == nil {
			err = copyTo(filepath.Join(tmp, FileName), f)
		}
		again := walHeader(w) != head
		w.Close()
		if err != nil {
			return fail(err)
		}
		if !again || try == 2 {
			break
		}
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(tmp, FileName)+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return fail(err)
	}
	db.SetMaxOpenConns(1)
	return db, tmp, nil
}

func walHeader(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	return string(b[:n])
}

// maxCopyBytes bounds the private copy a read makes (the file and its -wal together): beyond
// it, or beyond the temporary directory's free space less copyReserve, the read is refused
// rather than filling the disk or taking minutes (a sparse file of terabytes reads as zeros).
const (
	maxCopyBytes = 8 << 30
	copyReserve  = 256 << 20
)

// copyTo copies all of src (from its start) to the new file path, refusing a copy that would
// pass maxCopyBytes or the free space of path's filesystem (less copyReserve).
func copyTo(path string, src *os.File) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &st); err != nil {
		return err
	}
	limit := int64(maxCopyBytes)
	var fs unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &fs); err == nil {
		limit = min(limit, int64(fs.Bavail)*fs.Bsize-copyReserve)
	}
	if st.Size > limit {
		return fmt.Errorf("%s is %d bytes: a private copy of it would pass %d bytes (at most %d, and the free space of %s less %d); %w: copy the experiment directory to a private place and read it there",
			src.Name(), st.Size, limit, int64(maxCopyBytes), filepath.Dir(filepath.Dir(path)), int64(copyReserve), ErrBounds)
	}
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	// A file that grows while it is copied (a writer appends) is copied up to the limit.
	_, err = io.Copy(dst, io.NewSectionReader(src, 0, limit))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}
