package dbms

import (
	"errors"
	"fmt"
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
	for _, f := range BuiltFiles(d) {
		if !onPath(f) {
			errs = append(errs, fmt.Errorf("%s is not built on this host (%s missing): make setup builds it", d.Name(), f))
		}
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
// start command is a script of boxbench's (etcd's), the binary the script runs.
func ServerBinary(d DBMS) string {
	if b, ok := d.(interface{ ServerBinary() string }); ok {
		return b.ServerBinary()
	}
	return d.StartCommand(Layout{})[0]
}
