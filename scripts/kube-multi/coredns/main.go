// Command coredns is CoreDNS with only the plugins the multi-node cluster's Corefile uses
// (scripts/kube-multi/coredns.sh): upstream's own main compiles every plugin CoreDNS ships —
// the cloud DNS providers' SDKs, etcd's client, tracing, … — which made its cold build about 6
// CPU-minutes on CI's 2 cpus for a server that answers cluster.local and forwards the rest.
// It is upstream's main package with a shorter plugin list, the way CoreDNS documents for
// external plugins; the server, the plugins and their order are upstream's.
package main

import (
	"github.com/coredns/coredns/coremain"

	// The Corefile's plugins, and nothing else: CoreDNS registers each in its package's init
	// (upstream's design). A directive without its plugin here fails at start-up, naming it.
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
