package dbms

import (
	"context"
	"syscall"

	"github.com/boxbench/boxbench/driver"
)

// Idle turns d into a box without a database: the same packages (so a container platform uses
// the same image), the same system user, an empty data directory, and a process that only
// sleeps. Neighbours that run fio or stress-ng inside their own box use it.
func Idle(d DBMS) DBMS { return idle{d} }

type idle struct{ DBMS }

func (idle) InitCommands(Layout) []Step             { return nil }
func (idle) ConfigFiles(Settings) map[string][]byte { return map[string][]byte{} }
func (idle) StartCommand(Layout) []string           { return []string{"/bin/sleep", "infinity"} }
func (idle) StopSignal() syscall.Signal             { return syscall.SIGTERM }
func (idle) Ready(context.Context, driver.Endpoint, driver.Credentials) error {
	return nil
}

// Traits: the database's built files and run directory layout (the idle box runs the same
// image, where the database's socket would be); no server to observe, no cluster, and the
// server binary is the sleeping process's.
func (i idle) Traits() Traits {
	t := i.DBMS.Traits()
	return Traits{BuiltFiles: t.BuiltFiles, Socket: t.Socket, NoSocket: t.NoSocket}
}

// IsIdle reports whether d is an idle box description.
func IsIdle(d DBMS) bool {
	_, ok := d.(idle)
	return ok
}
