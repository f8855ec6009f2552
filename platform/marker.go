package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxbench/boxbench/internal/safefile"
)

// Marker is what a box writes into its work directory (workRoot/<experiment>/<run>) before it
// makes anything outside it, naming all it makes, so that a crashed experiment's box can be
// removed. Cleanup acts on a marker only after ReadMarker has checked it as strictly as a spec:
// boxbench removes, kills and unmounts as root what a marker names.
type Marker interface {
	// Place is the experiment and run the marker says it belongs to.
	Place() (experiment, run string)
	// Remove removes what the marker names (idempotent) and says what it removed.
	Remove(ctx context.Context) ([]string, error)
}

// Place is where a marker was found: the absolute, clean work root it was found under and the
// names of the experiment and run directories holding it (workRoot/<experiment>/<run>), each a
// real directory (not a link) whose name is in boxbench's vocabulary (ValidName).
type Place struct{ WorkRoot, Experiment, Run string }

// Dir is the box's work directory.
func (p Place) Dir() string { return filepath.Join(p.WorkRoot, p.Experiment, p.Run) }

// nameRe is the shape of the experiment ids and run names boxbench makes (the spec's name rule
// plus a suffix: "quickstart-1a2b3c4d", "r0001", "r0001-nb-noisy", "seed-0a1b2c3d"); a test's
// ids have the same shape. It cannot be "." or "..".
var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,80}$`)

// ValidName says whether s is an experiment or run name boxbench could have made.
func ValidName(s string) bool { return nameRe.MatchString(s) }

// markerMax caps a marker's size: boxbench's are a few hundred bytes.
const markerMax = 64 << 10

// errOtherPlace is a marker whose experiment and run are not those of its directory.
var errOtherPlace = errors.New("names another experiment or run than its directory's")

// ReadMarker reads the JSON marker at path, found at place at. The file must be a regular file
// (not a link, a FIFO or a device) of at most 64 KiB, owned by root or the user boxbench runs as
// and not writable by group or others, in directories that only they can change; it must hold
// no field the marker type lacks and name at's experiment and run; own then checks every other
// field against what the box would have derived from at (DerivedFields) and says what is wrong.
// A marker that fails any check is refused: boxbench never acts on what a file claims.
func ReadMarker[M Marker](path string, at Place, own func(M, Place) error) (M, error) {
	var m M
	b, err := safefile.Read(path, safefile.Rule{Max: markerMax, NoFollow: true, Owners: markerOwners()})
	if err != nil {
		return m, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	if exp, run := m.Place(); exp != at.Experiment || run != at.Run {
		return m, fmt.Errorf("%s: %w (experiment %q, run %q)", path, errOtherPlace, exp, run)
	}
	if err := own(m, at); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// markerOwners are the users whose markers are trusted: root and the user boxbench runs as (the
// work root must be theirs alone: runner.CheckWorkRoot).
func markerOwners() []uint32 { return []uint32{0, uint32(os.Geteuid())} }

// DerivedFields compares a marker got with the marker want that its box derives from its place,
// field by field, and names every field that differs (its JSON name, the value found and the
// value derived). Both must be of the same struct type.
func DerivedFields(got, want any) error {
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	var problems []string
	for i := 0; i < g.NumField(); i++ {
		if gv, wv := g.Field(i).Interface(), w.Field(i).Interface(); gv != wv {
			name, _, _ := strings.Cut(g.Type().Field(i).Tag.Get("json"), ",")
			problems = append(problems, fmt.Sprintf("%s %q is not what its experiment and run derive (valid: %q)", name, fmt.Sprint(gv), fmt.Sprint(wv)))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// CanonicalAbs refuses a path that is not absolute or not in canonical form: a "..", "." or
// empty segment, or a trailing '/' (so that no lexical join with it can leave a tree).
func CanonicalAbs(field, p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.Contains(p+"/", "/../") || strings.Contains(p+"/", "/./") {
		return fmt.Errorf("%s %q is not an absolute path in canonical form (valid: no '..', '.' or empty segment)", field, p)
	}
	return nil
}

// WriteMarker writes m as JSON to the file named file in the box's work directory dir, never
// through a link.
func WriteMarker(dir, file string, m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Close())
}

// CleanupMarked removes the boxes of crashed experiments through their markers: every file
// named file in a run directory workRoot/<experiment>/<run> of a crashed experiment (both real
// directories with names in boxbench's vocabulary) that read accepts. A marker that read refuses
// is not acted on and is reported in the error, naming the file and what is wrong with it; a
// marker naming another place than its directory is left alone.
func CleanupMarked[M Marker](ctx context.Context, workRoot, file string, read func(path string, at Place) (M, error), crashed func(string) bool) ([]string, error) {
	if workRoot == "" {
		return nil, nil
	}
	root, err := filepath.Abs(workRoot)
	if err != nil {
		return nil, err
	}
	var done []string
	var errs []error
	for _, at := range runPlaces(root, crashed) {
		path := filepath.Join(at.Dir(), file)
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		m, err := read(path, at)
		if errors.Is(err, errOtherPlace) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("not acting on the marker %w", err))
			continue
		}
		gone, err := m.Remove(ctx)
		done = append(done, gone...)
		errs = append(errs, err)
	}
	return done, errors.Join(errs...)
}

// runPlaces lists the run directories of crashed experiments under root: real directories (not
// links) whose names are in boxbench's vocabulary.
func runPlaces(root string, crashed func(string) bool) []Place {
	var places []Place
	for _, exp := range realDirs(root) {
		if reservedWorkDirs[exp] || !crashed(exp) {
			continue
		}
		for _, run := range realDirs(filepath.Join(root, exp)) {
			places = append(places, Place{WorkRoot: root, Experiment: exp, Run: run})
		}
	}
	return places
}

// realDirs are the entries of dir that are directories themselves (ReadDir does not follow a
// link) and whose names are valid.
func realDirs(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		if e.IsDir() && ValidName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names
}
