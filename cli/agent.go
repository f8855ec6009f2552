package cli

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/agent"
	"github.com/boxbench/boxbench/builtin"
)

// agentCmd is the far end of a remote client (package agent): one job on standard input, one
// reply on standard output. Platforms start it at their client sites; people do not.
func (a *app) agentCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "agent",
		Short:  "Run one workload job read from standard input (started by boxbench at a client site)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := a.stdin
			if in == nil {
				in = os.Stdin
			}
			return agent.Serve(cmd.Context(), in, a.stdout, builtin.Workload, a.log)
		},
	}
}
