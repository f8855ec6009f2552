// Command kube is one binary holding the upstream Kubernetes components that
// scripts/kube-local.sh runs (like the old hyperkube): the shared packages are compiled once and
// linked once, which is what makes a cold build from source fit in CI's budget.
//
// It dispatches on the name it was started under (a symlink named kube-apiserver, ...) or, when
// started as "kube", on its first argument ("kube kubelet --config ..."). Each component runs its
// own upstream cobra command exactly as its own main package would.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	_ "time/tzdata" // CronJob time zones, as kube-apiserver's and kube-controller-manager's mains do

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"

	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

// components maps a component's name to its upstream command. A constructor, not a command:
// only the component that runs is built, so no other component's flags or init work happens.
var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler": func() *cobra.Command {
		return scheduler.NewSchedulerCommand()
	},
	"kubelet":    func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
	"kube-proxy": proxy.NewProxyCommand,
}

func names() string {
	var n []string
	for k := range components {
		n = append(n, k)
	}
	n = append(n, "kubectl")
	sort.Strings(n)
	return strings.Join(n, ", ")
}

func main() {
	name := filepath.Base(os.Args[0])
	if _, ok := components[name]; !ok && name != "kubectl" {
		if len(os.Args) < 2 {
			fmt.Fprintf(os.Stderr, "usage: %s COMPONENT [flags]\nCOMPONENT is one of: %s\n", name, names())
			os.Exit(2)
		}
		// "kube kubelet --flags": the component sees itself as argv[0], as its own main would.
		os.Args = os.Args[1:]
		name = os.Args[0]
	}
	if name == "kubectl" {
		// As cmd/kubectl's main does.
		_, _ = logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args))
		if err := cli.RunNoErrOutput(kubectlcmd.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
		return
	}
	newCommand, ok := components[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "kube: unknown component %q; valid: %s\n", name, names())
		os.Exit(2)
	}
	os.Exit(cli.Run(newCommand()))
}
