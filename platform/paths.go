package platform

// Paths inside a box that has a file tree of its own (a container, a guest): the same on every
// such platform, so a server's command line and configuration read the same everywhere. The
// storage is mounted at BoxDataMount; the data directory is a sub-directory of it, as natively
// (<storage>/db); sockets go to BoxRunDir.
const (
	BoxRoot      = "/boxbench"
	BoxDataMount = BoxRoot + "/data"
	BoxDataDir   = BoxDataMount + "/db"
	BoxRunDir    = BoxRoot + "/run"
)
