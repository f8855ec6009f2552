package results

// An experiment directory (--out) is boxbench's only when it says so: run refuses a system
// directory, a link, a path with "..", and an existing directory holding anything but
// boxbench's own files, before it creates anything; then it takes the directory's lock, so one
// experiment at a time writes there.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/flock"
	"github.com/boxbench/boxbench/internal/ownfs"
	"github.com/boxbench/boxbench/internal/safefile"
)

// MarkerName is the ownership marker a run writes in a directory it claims: a small JSON file
// naming the experiment, which is also the file whose lock the running experiment holds.
const MarkerName = "boxbench-out.json"

// ErrInUse is wrapped by Claim's error when another boxbench holds the directory.
var ErrInUse = errors.New("in use by another boxbench")

// ErrNotOurs is wrapped by Claim's error for a directory run must not write in.
var ErrNotOurs = errors.New("not a directory boxbench may write in")

// ownNames are the files a boxbench writes in an experiment directory: an older boxbench's
// directory (without MarkerName) holding only these and a results file of its own is adopted.
var ownNames = []string{FileName, FileName + "-wal", FileName + "-shm", FileName + "-journal", "report.html"}

// Out is a claimed experiment directory, held (locked) until Close.
type Out struct {
	Dir  *ownfs.Dir
	lock *os.File
}

// Claim checks, makes and locks the experiment directory path for the experiment named
// experiment. Nothing is created before every check passed: path must not have a ".."
// component, be a symbolic link, be or resolve to a system directory (ownfs.SystemDir), or exist
// holding anything but boxbench's (its marker, or an older boxbench's own files beside a results
// file of its own); an existing directory must belong to root or the user running boxbench and
// not be writable by group or others (a file could otherwise be planted in it between a check
// and SQLite's open), nor be inside one of the trees protect names (the work root, whose
// directories boxbench removes). Missing directories are made one at a time without following
// a link. Then the marker is created (or opened) and locked; when another boxbench holds it
// the error wraps ErrInUse and names its pid. The lock is held until Close.
func Claim(path, experiment string, protect ...string) (*Out, error) {
	t, err := ownfs.Resolve(path)
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w: %w", path, ErrNotOurs, err)
	}
	for _, p := range []string{t.Path, t.Resolved} {
		if sys, ok := ownfs.SystemDir(p); ok {
			return nil, fmt.Errorf("--out %s: %w: %s is the system directory %s (valid: a directory of the experiment's own, e.g. out/<name>)", path, ErrNotOurs, p, sys)
		}
		for _, w := range protect {
			if w == "" {
				continue
			}
			if rw, err := filepath.EvalSymlinks(w); err == nil {
				w = rw
			}
			if within(p, w) {
				return nil, fmt.Errorf("--out %s: %w: %s is inside %s, the work root, whose directories boxbench removes (valid: a directory outside it)", path, ErrNotOurs, p, w)
			}
		}
	}
	// An existing directory is only opened (nothing is made); a new one is made and checked
	// too, in case another process made it, with its files, after Resolve looked.
	d, err := t.Open(0o755)
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", path, err)
	}
	if err := checkOurs(d); err != nil {
		d.Close()
		return nil, fmt.Errorf("--out %s: %w: %w", path, ErrNotOurs, err)
	}
	o := &Out{Dir: d}
	if err := o.take(experiment); err != nil {
		d.Close()
		return nil, fmt.Errorf("--out %s: %w", path, err)
	}
	return o, nil
}

// within says whether p is dir or inside it (both absolute).
func within(p, dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// checkOurs refuses an existing directory that is another's, or writable by group or others,
// or holds what boxbench did not write there.
func checkOurs(d *ownfs.Dir) error {
	st, err := d.Stat()
	if err != nil {
		return err
	}
	if !slices.Contains(safefile.InvokingUsers(), st.Uid) {
		return fmt.Errorf("%s belongs to uid %d, not to root or the user running boxbench", d.Path(), st.Uid)
	}
	if st.Mode&0o022 != 0 {
		return fmt.Errorf("%s has mode %04o: writable by group or others, who could plant a file in it while boxbench writes (fix: chmod go-w %s)", d.Path(), st.Mode&0o7777, d.Path())
	}
	names, err := d.Names()
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	if slices.Contains(names, MarkerName) {
		if what, err := d.NotRegular(MarkerName); err != nil || what != "" {
			return errors.Join(err, fmt.Errorf("%s is %s, not boxbench's marker", d.Join(MarkerName), what))
		}
		return nil
	}
	var other []string
	for _, n := range names {
		if !slices.Contains(ownNames, n) {
			other = append(other, n)
		}
	}
	if len(other) == 0 && slices.Contains(names, FileName) {
		// An older boxbench's directory: adopted if its results file is boxbench's.
		if err := checkResultsIn(d); err != nil {
			return fmt.Errorf("it holds %s, which is not boxbench's: %w", FileName, err)
		}
		return nil
	}
	slices.Sort(names)
	more := ""
	if len(names) > 8 {
		names, more = names[:8], fmt.Sprintf(" and %d more", len(names)-8)
	}
	return fmt.Errorf("%s holds files boxbench did not write (%s%s) and no %s; nothing in it was changed (valid: a new or empty directory, or one a boxbench run made)",
		d.Path(), strings.Join(names, ", "), more, MarkerName)
}

// checkResultsIn checks an existing results file in d as Open would, without writing.
func checkResultsIn(d *ownfs.Dir) error {
	s, err := openReadOnly(d)
	if err != nil {
		return err
	}
	return s.db.Close()
}

// take creates or opens the marker, locks it and writes what it says.
func (o *Out) take(experiment string) error {
	f, err := o.Dir.OpenOrCreate(MarkerName, 0o644)
	if err != nil {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			var st unix.Stat_t
			who := ""
			if unix.Fstat(int(f.Fd()), &st) == nil {
				if h := flock.HoldersOf(st); len(h) > 0 {
					who = " (" + strings.Join(h, ", ") + ")"
				}
			}
			return fmt.Errorf("%s is %w%s running an experiment there; nothing was changed (wait for it to end, or choose another --out)", o.Dir.Path(), ErrInUse, who)
		}
		return fmt.Errorf("lock %s: %w", o.Dir.Join(MarkerName), err)
	}
	o.lock = f
	return o.note(map[string]any{"experiment": experiment})
}

// Note records the experiment id in the marker once the runner knows it.
func (o *Out) Note(experimentID string) error {
	return o.note(map[string]any{"experiment_id": experimentID})
}

func (o *Out) note(kv map[string]any) error {
	m := map[string]any{}
	if b, err := io.ReadAll(io.NewSectionReader(o.lock, 0, 64<<10)); err == nil {
		_ = json.Unmarshal(b, &m) // what an earlier run wrote is kept when it reads
	}
	for k, v := range kv {
		m[k] = v
	}
	m["written_by"] = "boxbench run"
	m["pid"] = os.Getpid()
	m["claimed_at"] = time.Now().UTC().Format(time.RFC3339)
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := o.lock.Truncate(0); err != nil {
		return err
	}
	if _, err := o.lock.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("write %s: %w", o.Dir.Join(MarkerName), err)
	}
	return nil
}

// Path is the experiment directory's path.
func (o *Out) Path() string { return o.Dir.Path() }

// ResultsFile is the results file's path, for messages.
func (o *Out) ResultsFile() string { return filepath.Join(o.Dir.Path(), FileName) }

// Close releases the lock and the directory.
func (o *Out) Close() error {
	if o.lock != nil {
		o.lock.Close()
	}
	return o.Dir.Close()
}
