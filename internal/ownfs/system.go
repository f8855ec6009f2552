package ownfs

import (
	"slices"
	"strings"
)

// SystemDir says whether p (absolute, clean) is a system directory: the root, a directory
// that holds others' trees (/home, /tmp, /var …), or anything inside the trees of the system
// itself (/etc, /usr, /proc …).
func SystemDir(p string) (string, bool) {
	exact := []string{"/", "/home", "/root", "/tmp", "/var", "/var/tmp", "/var/lib", "/var/log", "/var/cache",
		"/var/spool", "/var/mail", "/var/opt", "/var/run", "/var/lock", "/run", "/run/user", "/mnt", "/media", "/opt",
		"/srv", "/nix", "/snap", "/lost+found", "/dev/shm"}
	if slices.Contains(exact, p) {
		return p, true
	}
	top := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 2)[0]
	trees := []string{"etc", "usr", "bin", "sbin", "boot", "efi", "dev", "proc", "sys"}
	if slices.Contains(trees, top) || strings.HasPrefix(top, "lib") {
		return "/" + top, true
	}
	return "", false
}
