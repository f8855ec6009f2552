package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/agent"
	"github.com/boxbench/boxbench/builtin"
	"github.com/boxbench/boxbench/builtin/databases"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/images/rootfs"
)

func (a *app) imagesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "images",
		Short: "Build and list the database root filesystems and images, offline, from Debian packages",
	}
	var only []string
	var jobs int
	// The flags that ask for a platform's own images (platform.ImageBuilder: --vm) come from
	// the platforms of the build; a platform only describes itself here, nothing is started.
	extra := imageFlags(builtin.Platforms(nil))
	build := &cobra.Command{
		Use:   "build",
		Short: "Build each database's root filesystem and image; a no-op when the inputs are unchanged",
		Long: "build makes one root filesystem per database from the same Debian packages and versions the\n" +
			"host runs natively (one shared Debian base debootstrapped with the host's apt sources, plus each\n" +
			"database's packages), keeps it under " + rootfs.DefaultRoot + " for every platform, and imports it\n" +
			"into the engine as an image. Both are named by the hash of the inputs, so a rebuild with the same\n" +
			"inputs does nothing. Databases are built --jobs at a time; concurrent builds in other processes\n" +
			"wait for each other (file locks), never build the same thing twice.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer stopping(cmd.Context(), "building images", "the builds under way have stopped")()
			names := only
			if len(names) == 0 {
				names = databases.Names()
			}
			var ds []dbms.DBMS
			var bad []string
			for _, n := range names {
				d, err := databases.Get(n)
				if err != nil {
					bad = append(bad, "--dbms: "+err.Error())
					continue
				}
				ds = append(ds, d)
			}
			if jobs < 1 {
				bad = append(bad, fmt.Sprintf("--jobs: %d is not a positive number of builds", jobs))
			}
			if len(bad) > 0 {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s", strings.Join(bad, "; "))}
			}
			engine, err := image.Connect()
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err, Hint: "start dockerd (make setup does)"}
			}
			defer engine.Close()
			store := image.NewStore(engine, a.log)
			b := &imageBuild{store: store, out: a.stdout, warn: a.stderr}
			for _, f := range extra {
				if f.on {
					b.platforms = append(b.platforms, f.builders...)
				}
			}
			errs := b.all(cmd.Context(), ds, jobs)
			if cmd.Context().Err() != nil {
				return interrupted("the image builds were stopped; boxbench images build builds what is missing")
			}
			if len(errs) > 0 {
				return &ExitError{Code: ExitFailure, Err: errors.Join(errs...)}
			}
			return nil
		},
	}
	for _, f := range extra {
		build.Flags().BoolVar(&f.on, f.name, false, f.usage)
	}
	build.Flags().IntVar(&jobs, "jobs", 3, "build this many databases at once (their trees share one Debian base, built once; apt's downloads and dpkg wait on the network and the disk as much as on the CPU)")
	build.Flags().StringSliceVar(&only, "dbms", nil, "only these databases (default: all: "+strings.Join(databases.Names(), ", ")+")")
	list := &cobra.Command{
		Use:   "list",
		Short: "List boxbench's root filesystems and images with their database versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer onlyReading(cmd.Context(), "listing the images")()
			trees, err := rootfs.NewCache("", a.log).List()
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			for _, t := range trees {
				size := "?"
				if n, err := t.Size(); err == nil {
					size = fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
				}
				fmt.Fprintf(a.stdout, "%-10s %s  %s %s  %s\n", t.DBMS, t.Dir, t.ServerPackage, t.ServerVersion, size)
			}
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
	cmd.AddCommand(build, list, a.agentImageCmd())
	return cmd
}

// agentImageCmd builds the image a client pod on another node runs (kubernetes.agentImage).
func (a *app) agentImageCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "agent",
		Short: "Build an image holding this boxbench binary, for client pods on nodes that are not this host",
		Long: "agent imports this (statically linked) boxbench binary into the engine as an image whose\n" +
			"entrypoint is the binary and whose user is nobody, tagged " + image.AgentRepository + ":<hash of the binary>.\n" +
			"Get it to the cluster's nodes (push it to a registry they pull from, or `docker save` it into\n" +
			"each node's runtime) and name it in the spec's kubernetes.agentImage. A local node gets it\n" +
			"from this engine by itself.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer stopping(cmd.Context(), "building the agent image", "the build has stopped")()
			bin, err := os.Executable()
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			engine, err := image.Connect()
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err, Hint: "start dockerd (make setup does)"}
			}
			defer engine.Close()
			im, err := image.NewStore(engine, a.log).BuildAgent(cmd.Context(), bin, agent.Build())
			if cmd.Context().Err() != nil {
				return interrupted("the agent image build was stopped")
			}
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			fmt.Fprintf(a.stdout, "%s %s (boxbench %s)\n", im.Ref, im.ID, agent.Build())
			return nil
		},
	}
}

func state(built bool) string {
	if built {
		return "built"
	}
	return "cached"
}
