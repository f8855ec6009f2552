// Package v2test holds the test that runs inside the cgroup v2 test bed: a QEMU guest whose
// kernel mounts only cgroup v2 (e2e/cgroupv2_test.go builds and boots it). Outside the guest it
// skips: it needs a v2-only host that nothing else uses, which this host is not.
package v2test
