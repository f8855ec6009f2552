package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/image"
)

func (a *app) imagesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "images",
		Short: "Build and list the database images, offline, from Debian packages",
	}
	var only []string
	build := &cobra.Command{
		Use:   "build",
		Short: "Build each database image (debootstrap + import); a no-op when the inputs are unchanged",
		Long: "build makes one image per database from the same Debian packages and versions the host\n" +
			"runs natively (debootstrap with the host's apt sources, then import into the engine). The\n" +
			"tag is the hash of the inputs, so a rebuild with the same inputs does nothing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names := only
			if len(names) == 0 {
				names = dbms.Names()
			}
			var ds []dbms.DBMS
			var bad []string
			for _, n := range names {
				d, err := dbms.Get(n)
				if err != nil {
					bad = append(bad, err.Error())
					continue
				}
				ds = append(ds, d)
			}
			if len(bad) > 0 {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("--dbms: %s", strings.Join(bad, "; "))}
			}
			engine, err := image.Connect()
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err, Hint: "start dockerd (make setup does)"}
			}
			defer engine.Close()
			store := image.NewStore(engine, a.log)
			var errs []error
			for _, d := range ds {
				im, built, err := store.Build(cmd.Context(), d)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", d.Name(), err))
					continue
				}
				state := "cached"
				if built {
					state = "built"
				}
				fmt.Fprintf(a.stdout, "%-10s %s  %s %s  (%s)\n", d.Name(), im.Ref, im.ServerPackage, im.ServerVersion, state)
				if err := image.CheckNative(cmd.Context(), im); err != nil {
					fmt.Fprintf(a.stderr, "warning: %s: %v\n", d.Name(), err)
				}
			}
			if len(errs) > 0 {
				return &ExitError{Code: ExitFailure, Err: errors.Join(errs...)}
			}
			return nil
		},
	}
	build.Flags().StringSliceVar(&only, "dbms", nil, "only these databases (default: all: "+strings.Join(dbms.Names(), ", ")+")")
	list := &cobra.Command{
		Use:   "list",
		Short: "List boxbench's images with their database versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			engine, err := image.Connect()
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			defer engine.Close()
			ims, err := image.NewStore(engine, a.log).List(cmd.Context())
			if err != nil {
				return err
			}
			for _, im := range ims {
				fmt.Fprintf(a.stdout, "%-10s %s  %s %s\n", im.DBMS, im.Ref, im.ServerPackage, im.ServerVersion)
			}
			return nil
		},
	}
	cmd.AddCommand(build, list)
	return cmd
}
