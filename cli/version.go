package cli

import (
	"fmt"
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
				version.Version, version.CommitOrVCS(), runtime.Version(), spec.APIVersion, results.SchemaVersion)
			return nil
		},
	}
}
