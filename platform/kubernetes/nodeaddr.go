package kubernetes

import "context"

// NodeAddress (platform.Clusterer): a node on the host's network has no cluster network to be
// named on; on the pod network cluster DNS resolves a member's name through its headless
// Service.
func (*Platform) NodeAddress(context.Context, string, int) (string, error) { return "", nil }
