package platform

import (
	"io"

	"github.com/boxbench/boxbench/image/tarball"
)

// Snapshot is a cleanly stopped data directory kept on the host (the runner's seed cache). A box
// on this host restores it with a copy or reflink from Dir; a box the host cannot see into (a
// pod, a VM guest) receives it as a tar stream from WriteTar.
type Snapshot struct {
	Key string // what the data is: the seed key (dbms, its build, the load parameters)
	Dir string // host directory holding the data directory's contents
}

// WriteTar streams the snapshot's contents as a tar archive under prefix, owned by owner (nil:
// as on disk).
func (s Snapshot) WriteTar(w io.Writer, prefix string, owner *tarball.Owner) error {
	tw := tarball.NewWriter(w, owner)
	if err := tw.Tree(s.Dir, prefix); err != nil {
		return err
	}
	return tw.Close()
}
