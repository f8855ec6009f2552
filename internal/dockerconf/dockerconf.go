// Package dockerconf registers boxbench's OCI runtimes with a local dockerd: it merges them into
// the daemon's configuration file (daemon.json) without touching anything else in it, and makes
// the running daemon reload them (SIGHUP reloads "runtimes" in dockerd ≥ 1.12).
//
// Only the runtime names boxbench owns (Runtime.Name) are added or replaced; every other key and
// every other runtime a user registered is kept as it was (numbers verbatim). The file is
// replaced atomically (a temporary file in the same directory, then rename), keeping its mode.
//
// Layer (docs/architecture.md): OS plumbing — it talks to the host and imports only leaves;
// the spec and everything above may import it.
package dockerconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Runtime is one entry of daemon.json's "runtimes" object.
type Runtime struct {
	Name string   // e.g. "runsc-host"
	Path string   // absolute path of the runtime binary
	Args []string // runtimeArgs, e.g. ["--network=host"]
}

var validName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// Validate says what is wrong with r, all problems at once.
func (r Runtime) Validate() error {
	var errs []error
	if !validName.MatchString(r.Name) {
		errs = append(errs, fmt.Errorf("runtime name %q: want lower-case letters, digits and '-', starting with a letter, at most 31", r.Name))
	}
	if !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
		errs = append(errs, fmt.Errorf("runtime %s: path %q is not a clean absolute path", r.Name, r.Path))
	}
	for _, a := range r.Args {
		if !strings.HasPrefix(a, "--") || strings.ContainsAny(a, " \t\n\x00") {
			errs = append(errs, fmt.Errorf("runtime %s: argument %q: want one --flag[=value] without blanks", r.Name, a))
		}
	}
	return errors.Join(errs...)
}

// Merge returns the configuration old (a daemon.json's bytes; empty or absent means {}) with rs
// set in its "runtimes" object, and whether anything changed. Keys it does not own are kept
// verbatim. old must be a JSON object whose "runtimes", if present, is an object.
func Merge(old []byte, rs []Runtime) ([]byte, bool, error) {
	var errs []error
	for _, r := range rs {
		errs = append(errs, r.Validate())
	}
	if err := errors.Join(errs...); err != nil {
		return nil, false, err
	}
	top := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &top); err != nil {
			return nil, false, fmt.Errorf("daemon configuration is not a JSON object: %w", err)
		}
	}
	runtimes := map[string]json.RawMessage{}
	if raw, ok := top["runtimes"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &runtimes); err != nil {
			return nil, false, fmt.Errorf("daemon configuration: \"runtimes\" is not an object: %w", err)
		}
	}
	changed := false
	for _, r := range rs {
		entry := map[string]any{"path": r.Path}
		if len(r.Args) > 0 {
			entry["runtimeArgs"] = r.Args
		}
		b, _ := json.Marshal(entry)
		if prev, ok := runtimes[r.Name]; !ok || !sameJSON(prev, b) {
			runtimes[r.Name] = b
			changed = true
		}
	}
	if !changed && len(bytes.TrimSpace(old)) > 0 {
		return old, false, nil
	}
	top["runtimes"], _ = json.Marshal(runtimes)
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return nil, false, err
	}
	return append(out, '\n'), true, nil
}

// sameJSON compares two JSON values ignoring layout and key order.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// Write merges rs into the file at path (created when absent) and reports whether it changed.
func Write(path string, rs []Runtime) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	out, changed, err := Merge(old, rs)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if !changed {
		return false, nil
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".daemon.json-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	return true, os.Rename(tmp.Name(), path)
}

// DaemonPID returns the pid in dockerd's pidfile when that process is alive and is a dockerd
// (its command name), and 0 when no daemon runs. Only that pid is ever signalled.
func DaemonPID(pidfile string) (int, error) {
	raw, err := os.ReadFile(pidfile)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("%s: %q is not a pid", pidfile, strings.TrimSpace(string(raw)))
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // a stale pidfile
	}
	if err != nil {
		return 0, err
	}
	if strings.TrimSpace(string(comm)) != "dockerd" {
		return 0, nil // the pid was reused by another program
	}
	return pid, nil
}

// Reload asks the dockerd in pidfile to reload its configuration (SIGHUP). It returns false
// when no daemon runs.
func Reload(pidfile string) (bool, error) {
	pid, err := DaemonPID(pidfile)
	if err != nil || pid == 0 {
		return false, err
	}
	return true, syscall.Kill(pid, syscall.SIGHUP)
}

// Names returns the names of rs, sorted.
func Names(rs []Runtime) []string {
	n := make([]string, len(rs))
	for i, r := range rs {
		n[i] = r.Name
	}
	slices.Sort(n)
	return n
}
