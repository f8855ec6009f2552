package dbms

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strings"
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
	switch len(absent) {
	case 0:
	case 1:
		errs = append(errs, fmt.Errorf("%s is not built on this host (%s missing): make setup builds it", d.Name(), absent[0]))
	default:
		errs = append(errs, fmt.Errorf("%s is not built on this host (%d files missing, %s first): make setup builds it",
			d.Name(), len(absent), absent[0]))
	}
	if bin := ServerBinary(d); !onPath(bin) && !slices.Contains(BuiltFiles(d), bin) {
		errs = append(errs, fmt.Errorf("%s is not installed on this host (%s missing): %s", d.Name(), bin, install))
	}
	if u := d.User(); u != "" {
		if _, err := user.Lookup(u); err != nil {
			errs = append(errs, fmt.Errorf("%s runs as system user %q, which does not exist on this host: %s "+
				"creates it, or: useradd --system --no-create-home %s", d.Name(), u, install, u))
		}
	}
	return errors.Join(errs...)
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
