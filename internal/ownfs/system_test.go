package ownfs

import "testing"

// The system directories --out and --work-root refuse, and paths of the same look that are not.
func TestSystemDir(t *testing.T) {
	for p, want := range map[string]bool{"/lib64/x": true, "/home": true, "/home/alice/out": false, "/srv/bench/out": false,
		"/root": true, "/root/out": false, "/tmp/out": false, "/etcetera": false, "/sys/fs/cgroup": true, "/dev/shm": true} {
		if _, got := SystemDir(p); got != want {
			t.Errorf("SystemDir(%s) = %v, want %v", p, got, want)
		}
	}
}
