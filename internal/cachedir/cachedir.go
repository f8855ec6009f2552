// Package cachedir names the one directory where boxbench keeps what is expensive to make and
// keyed by version or by the hash of its inputs: root filesystems, guest images, the Kubernetes
// build, runsc (docs/ci.md lists them). BOXBENCH_CACHE moves it, so that a cold build can be
// measured, or a second cache kept, without touching the machine's shared one; the scripts
// under scripts/ read the same variable.
//
// Layer (docs/architecture.md): a leaf — it imports no other package of boxbench, so any
// package may import it.
package cachedir

import (
	"os"
	"path/filepath"
)

// Default is the cache root when BOXBENCH_CACHE is unset.
const Default = "/var/cache/boxbench"

// Env names the variable that moves the cache root (an absolute path).
const Env = "BOXBENCH_CACHE"

// Root is $BOXBENCH_CACHE when it is an absolute path, else Default. A relative value is
// ignored rather than resolved against whatever directory boxbench was started in.
func Root() string {
	if v := os.Getenv(Env); v != "" && filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	return Default
}

// Path is the directory of one kind of cache entry under Root ("rootfs", "vm", …).
func Path(kind string) string { return filepath.Join(Root(), kind) }
