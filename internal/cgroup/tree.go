package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Controllers are the cgroup v2 controllers boxbench's groups use: cpu (quota, weight), cpuset,
// io (io.max, io.weight), memory and pids (accounting).
var Controllers = []string{"cpu", "cpuset", "io", "memory", "pids"}

// treeMu orders preparing a group's parents and creating it against removing empty parents, so
// one box's teardown cannot remove the experiment group another box of this process is
// about to be created in.
var treeMu sync.Mutex

// madeParents are the parent groups (paths like "/boxbench") this process created, so that
// only those are removed when they empty. The experiment's own group is always boxbench's.
var madeParents = map[string]bool{}

// ancestors lists the parent groups of p below the root, outermost first:
// "/boxbench/e/r" → ["/boxbench", "/boxbench/e"].
func ancestors(p string) []string {
	var out []string
	for d := path.Dir(path.Clean(p)); d != "/" && d != "."; d = path.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}

// MissingControllers returns the controllers of Controllers that the v2 root does not offer
// (its cgroup.controllers), e.g. io on a kernel without CONFIG_BLK_CGROUP.
func MissingControllers() ([]string, error) {
	b, err := os.ReadFile(path.Join(Root, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("read the cgroup v2 root's controllers: %w", err)
	}
	have := strings.Fields(string(b))
	var missing []string
	for _, c := range Controllers {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	return missing, nil
}

// prepareV2 makes the parents of group p exist and delegate every controller in Controllers
// down to p: each level from the root to p's parent gets "+ctrl" in cgroup.subtree_control
// where it lacks it. Without this, a controller that is not enabled in the parent has no files
// in the child (io.max "permission denied" or absent). boxbench's parents never hold
// processes, so the "no internal processes" rule is met; a parent that does (someone put a
// process into /boxbench) is refused by the kernel with EBUSY, reported in those words. The
// root is only written when it lacks a controller in its subtree_control. Callers hold treeMu.
func prepareV2(p string) error {
	missing, err := MissingControllers()
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("cgroup v2: the root (%s/cgroup.controllers) does not offer the %s controller%s boxbench needs "+
			"for limits and telemetry: the kernel lacks it or it is bound to a v1 hierarchy", Root,
			strings.Join(missing, ", "), plural(len(missing)))
	}
	levels := append([]string{"/"}, ancestors(p)...)
	for _, lvl := range levels {
		dir := path.Join(Root, lvl)
		if lvl != "/" {
			if err := os.Mkdir(dir, 0o755); err == nil {
				madeParents[lvl] = true
			} else if !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("create cgroup %s: %w", lvl, err)
			}
		}
		if err := enable(dir); err != nil {
			return err
		}
	}
	return nil
}

// enable writes "+ctrl" into dir's cgroup.subtree_control for each controller it lacks, one at
// a time so that an error names the controller.
func enable(dir string) error {
	file := path.Join(dir, "cgroup.subtree_control")
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", file, err)
	}
	var have []string
	for _, f := range strings.Fields(string(b)) {
		have = append(have, strings.TrimPrefix(f, "+")) // the kernel shows names; a fixture keeps what was written
	}
	for _, c := range Controllers {
		if slices.Contains(have, c) {
			continue
		}
		if err := appendLine(file, "+"+c); err != nil {
			hint := ""
			if errors.Is(err, syscall.EBUSY) {
				hint = ": the group has processes of its own, and cgroup v2 lets only groups without processes " +
					"delegate controllers to children (no internal processes)"
			}
			return fmt.Errorf("enable the %s controller for the children of %s (write +%s to %s): %w%s", c, dir, c, file, err, hint)
		}
	}
	return nil
}

// appendLine writes s as one write, as the kernel's control files expect; on a plain file (a
// fixture tree) it appends, which is what the kernel's subtree_control shows after the write.
func appendLine(file, s string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s + "\n")
	return errors.Join(err, f.Close())
}

// removeParents removes the now empty parents of group p that are boxbench's: the experiment
// group (/boxbench/<exp>) always, /boxbench only when this process created it. A parent still
// holding groups (another run, another experiment) stays. dirs maps a group path to the
// directories it has (one on v2, one per hierarchy on v1). Callers hold treeMu.
func removeParents(p string, dirs func(string) []string) {
	anc := ancestors(p)
	for i := len(anc) - 1; i >= 0; i-- {
		lvl := anc[i]
		if i == 0 && !madeParents[lvl] {
			return
		}
		for _, d := range dirs(lvl) {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				return // not empty (ENOTEMPTY/EBUSY): someone else's group is in it
			}
		}
		delete(madeParents, lvl)
	}
}

// noteParentsV1 records which parents of p do not exist yet (in the memory hierarchy), before
// the v1 library creates them, so that removeParents removes only boxbench's own. Callers hold
// treeMu.
func noteParentsV1(p string) {
	for _, lvl := range ancestors(p) {
		if _, err := os.Stat(On(V1, lvl).Dir("memory")); errors.Is(err, os.ErrNotExist) {
			madeParents[lvl] = true
		}
	}
}

// groupDirs lists the directories of group p in every hierarchy of version v.
func groupDirs(v Version, p string) []string {
	if v == V2 {
		return []string{On(V2, p).Dir("")}
	}
	ents, _ := os.ReadDir(Root)
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, On(V1, p).Dir(e.Name()))
		}
	}
	return dirs
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
