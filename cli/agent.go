package cli

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/agent"
	"github.com/boxbench/boxbench/builtin"
)

// agentCmd is the far end of a remote client (package agent): one job on standard input, one
// reply on standard output. Platforms start it at their client sites; people do not.
//
// With --idle it only waits for SIGTERM or SIGINT: the main process of a client pod, in which
// the job's agent is then started (an agent image has no other program to wait with).
func (a *app) agentCmd() *cobra.Command {
	var idle bool
	cmd := &cobra.Command{
		Use:    "agent",
		Short:  "Run one workload job read from standard input (started by boxbench at a client site)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if idle {
				ctx, stop := signal.NotifyContext(cmd.Context(), unix.SIGTERM, unix.SIGINT)
				defer stop()
				<-ctx.Done()
				return nil
			}
			in := a.stdin
			if in == nil {
				in = os.Stdin
			}
			return agent.Serve(cmd.Context(), in, a.rawStdout, builtin.Workload, a.log)
		},
	}
	cmd.Flags().BoolVar(&idle, "idle", false, "wait for SIGTERM or SIGINT and exit (a client pod's main process)")
	return cmd
}
