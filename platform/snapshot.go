package platform

// Snapshot is a cleanly stopped data directory kept on the host (the runner's seed cache). A box
// on this host restores it with a copy or reflink from Dir (storage.Restore); a box the host
// cannot see into streams Dir in as a tar archive (images/image/tarball), as the Docker platform does
// for a volume it cannot reach.
type Snapshot struct {
	Key string // what the data is: the seed key (dbms, its build, the load parameters)
	Dir string // host directory holding the data directory's contents
}
