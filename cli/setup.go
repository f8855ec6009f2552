package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/builtin"
)

func (a *app) setupCmd() *cobra.Command {
	var steps, images bool
	cmd := &cobra.Command{
		Use:   "setup FILE",
		Short: "Say what one spec needs installed and built here: scripts/setup.sh's steps and the images",
		Long: "setup reads the spec and prints what its cells need on this host: the steps of\n" +
			"scripts/setup.sh (packages, dockerd, what boxbench builds from source) and the images\n" +
			"`boxbench images build` makes. `make setup SPEC=FILE` installs and builds exactly that;\n" +
			"`boxbench plan FILE` then lists what is still missing with its command. Nothing is\n" +
			"started. --steps and --images print one line each, for scripts.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps := builtin.Platforms(a.log)
			e, _, err := loadSpec(args[0], ps)
			if err != nil {
				return err
			}
			s := builtin.SetupOf(cmd.Context(), ps, e)
			build := imagesArgs(s)
			switch {
			case steps:
				fmt.Fprintln(a.stdout, strings.Join(s.Steps, " "))
			case images:
				fmt.Fprintln(a.stdout, build)
			default:
				fmt.Fprintf(a.stdout, "steps:  bash scripts/setup.sh %s\n", strings.Join(s.Steps, " "))
				if build != "" {
					fmt.Fprintf(a.stdout, "images: boxbench images build %s\n", build)
				}
				fmt.Fprintf(a.stdout, "both:   make setup SPEC=%s\n", args[0])
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&steps, "steps", false, "print only the steps of scripts/setup.sh, on one line")
	cmd.Flags().BoolVar(&images, "images", false, "print only the arguments of `boxbench images build` (nothing when no image is needed)")
	cmd.MarkFlagsMutuallyExclusive("steps", "images")
	return cmd
}

// imagesArgs are the arguments of `boxbench images build` for s ("" when it needs none).
func imagesArgs(s builtin.Setup) string {
	if len(s.Images) == 0 {
		return ""
	}
	args := "--dbms " + strings.Join(s.Images, ",")
	for _, f := range s.ImageFlags {
		args += " --" + f
	}
	return args
}
