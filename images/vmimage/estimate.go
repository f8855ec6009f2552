package vmimage

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/prereq"
)

// secondsFile records how long an entry's build took, for the estimate of the next build of the
// same database and variant (written after the entry is complete: not part of its validity).
const secondsFile = "build_seconds.txt"

// Typical build times of one guest image on a 2-vCPU host under TCG (docs/ci.md: Redis's two
// variants at once, 7–13 min cold; the docker variant's first boot, loading the image, the
// longer), for an estimate where the cache holds no record of its own.
var typical = map[string]time.Duration{Plain: 4 * time.Minute, Docker: 8 * time.Minute}

func recordBuild(dir string, took time.Duration) {
	_ = os.WriteFile(filepath.Join(dir, secondsFile), []byte(strconv.FormatFloat(took.Seconds(), 'f', 1, 64)+"\n"), 0o644)
}

// Need is the prerequisite "dbms's guest image (variant) is not built", made by
// `boxbench images build --dbms dbms --vm`. When the database's root filesystem is not built
// either, treeTakes and treeBasis are its estimate, which the one command also spends.
func (c Cache) Need(dbms, variant string, treeTakes time.Duration, treeBasis string) prereq.Need {
	takes, basis := c.Estimate(dbms, variant)
	what := dbms + "'s guest image"
	if variant != Plain {
		what += " (" + variant + ")"
	}
	what += " is not built"
	if treeTakes > 0 {
		what = dbms + "'s root filesystem and guest image are not built"
		takes = takes + treeTakes
		if basis != prereq.Typical || !strings.HasPrefix(treeBasis, prereq.Typical) {
			basis = "guest image: " + basis + "; root filesystem: " + treeBasis
		} else {
			basis = treeBasis
		}
	}
	return prereq.Need{What: what, Command: "boxbench images build --dbms " + dbms + " --vm", Takes: takes, Basis: basis}
}

// Estimate is how long building dbms's guest image of variant should take here: the newest
// recorded build of an entry of the same database and variant in this cache, else a typical
// figure on a 2-vCPU host.
func (c Cache) Estimate(dbms, variant string) (time.Duration, string) {
	root := c.Root
	if root == "" {
		root = DefaultRoot
	}
	name := dbms
	if variant != Plain {
		name += "-" + variant
	}
	ents, _ := os.ReadDir(root)
	var best time.Duration
	var at time.Time
	for _, e := range ents {
		m := entryRe.FindStringSubmatch(e.Name())
		if m == nil || m[1] != name || m[2] != "" || !e.IsDir() {
			continue
		}
		f := filepath.Join(root, e.Name(), secondsFile)
		b, err := os.ReadFile(f)
		fi, serr := os.Stat(f)
		sec, perr := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil || serr != nil || perr != nil || sec <= 0 || fi.ModTime().Before(at) {
			continue
		}
		best, at = time.Duration(sec*float64(time.Second)), fi.ModTime()
	}
	if best > 0 {
		return best, "its last build here took " + prereq.About(best)
	}
	return typical[variant], prereq.Typical
}
