package dbms

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/boxbench/boxbench/internal/prereq"
)

// Missing says what this host lacks to run d as a host process: its server binary or the
// system user it runs as, each with the command that provides it. Nil when nothing is
// missing. It starts nothing; the native platform's Check and doctor both use it, so a
// missing user is caught before the first run rather than at every start.
func Missing(d DBMS) error {
	install := "apt-get install -y " + strings.Join(d.Packages(), " ")
	var errs []error
	// Built files need only exist (a server binary is checked below; a jar is not executable).
	var absent []string
	for _, f := range BuiltFiles(d) {
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
			absent = append(absent, f)
		}
	}
	build := BuildNeed(d)
	switch len(absent) {
	case 0:
	case 1:
		errs = append(errs, prereq.New(build, fmt.Errorf("%s is not built on this host (%s missing): make setup STEPS=%s builds it",
			d.Name(), absent[0], d.Name())))
	default:
		errs = append(errs, prereq.New(build, fmt.Errorf("%s is not built on this host (%d files missing, %s first): make setup STEPS=%s builds it",
			d.Name(), len(absent), absent[0], d.Name())))
	}
	if bin := ServerBinary(d); !onPath(bin) && !slices.Contains(BuiltFiles(d), bin) {
		n := prereq.Need{What: d.Name() + " is not installed on this host", Command: install, Takes: typicalInstall, Basis: prereq.Typical}
		errs = append(errs, prereq.New(n, fmt.Errorf("%s is not installed on this host (%s missing): %s", d.Name(), bin, install)))
	}
	if u := d.User(); u != "" {
		if _, err := user.Lookup(u); err != nil {
			errs = append(errs, fmt.Errorf("%s runs as system user %q, which does not exist on this host: %s "+
				"creates it, or: useradd --system --no-create-home %s", d.Name(), u, install, u))
		}
	}
	return errors.Join(errs...)
}

// Typical times of what Missing's commands do on a 2-vCPU host (docs/ci.md): a database's
// Debian packages, and a server built from source (FerretDB 4–6 min from the module proxy;
// Cassandra's jars under a minute, after Debian's JDK).
const (
	typicalInstall = time.Minute
	typicalBuild   = 5 * time.Minute
)

// BuildNeed is the prerequisite of d's BuiltFiles: scripts/setup.sh's step named after d.
func BuildNeed(d DBMS) prereq.Need {
	return prereq.Need{What: d.Name() + " is not built on this host", Command: "make setup STEPS=" + d.Name(),
		Takes: typicalBuild, Basis: prereq.Typical}
}

func onPath(bin string) bool {
	_, err := exec.LookPath(bin)
	return err == nil
}

// ServerBinary is the server's executable: the first word of its start command, or, when the
// start command is a script of boxbench's (etcd's), the binary the script runs
// (Traits.ServerBinary).
func ServerBinary(d DBMS) string {
	if b := d.Traits().ServerBinary; b != "" {
		return b
	}
	return d.StartCommand(Layout{})[0]
}
