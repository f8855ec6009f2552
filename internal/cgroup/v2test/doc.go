// Package v2test holds the cgroup v2 test bed: TestBed (on the host) boots the VM platform's
// guest images in QEMU with a kernel that mounts only cgroup v2 and runs this package's guest
// tests inside, TestNativeOnV2 and TestDockerOnV2. Outside a guest those skip: they need a
// v2-only host that nothing else uses, which this host is not. See docs/cgroup-v2.md.
//
// Layer (docs/architecture.md): a test bed, not a kit — it has tests only, and nothing imports
// it.
package v2test
