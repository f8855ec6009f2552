package cli

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/results"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/version"
)

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print boxbench's version, commit, spec and results-schema versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer onlyReading(cmd.Context(), "printing the version")()
			fmt.Fprintf(a.stdout, "boxbench %s (commit %s, %s)\nspec %s, results schema %s\n",
				version.Version(), version.Commit(), runtime.Version(), spec.APIVersion, results.SchemaVersion)
			return nil
		},
	}
}

// Command is boxbench's command tree as Main runs it, for tools that generate its manual pages
// and shell completions (cmd/gendocs). Its commands write to discarded streams: to run a
// command, use Main.
func Command() *cobra.Command {
	return newApp(io.Discard, io.Discard).root()
}
