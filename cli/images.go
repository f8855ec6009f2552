package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxbench/boxbench/agent"
	"github.com/boxbench/boxbench/dbms"
	"github.com/boxbench/boxbench/image"
	"github.com/boxbench/boxbench/rootfs"
	"github.com/boxbench/boxbench/vmimage"
)

func (a *app) imagesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "images",
		Short: "Build and list the database root filesystems and images, offline, from Debian packages",
	}
	var only []string
	var vm bool
	build := &cobra.Command{
		Use:   "build",
		Short: "Build each database's root filesystem and image; a no-op when the inputs are unchanged",
		Long: "build makes one root filesystem per database from the same Debian packages and versions the\n" +
			"host runs natively (debootstrap with the host's apt sources), keeps it under " + rootfs.DefaultRoot + "\n" +
			"for every platform, and imports it into the engine as an image. Both are named by the hash of\n" +
			"the inputs, so a rebuild with the same inputs does nothing.",
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
				// The tree first, also when the engine has the image: other platforms use it.
				tree, built, err := store.Rootfs.Get(cmd.Context(), d)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", d.Name(), err))
					continue
				}
				fmt.Fprintf(a.stdout, "%-10s %s  %s %s  (%s)\n", d.Name(), tree.Dir, tree.ServerPackage, tree.ServerVersion, state(built))
				im, built, err := store.Build(cmd.Context(), d)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", d.Name(), err))
					continue
				}
				fmt.Fprintf(a.stdout, "%-10s %s  %s %s  (%s)\n", d.Name(), im.Ref, im.ServerPackage, im.ServerVersion, state(built))
				if err := image.CheckNative(cmd.Context(), im); err != nil {
					fmt.Fprintf(a.stderr, "warning: %s: %v\n", d.Name(), err)
				}
				if !vm {
					continue
				}
				for _, variant := range []string{vmimage.Plain, vmimage.Docker} {
					g, built, err := vmimage.Cache{}.Get(cmd.Context(), tree, variant)
					if err != nil {
						errs = append(errs, fmt.Errorf("%s: %w", d.Name(), err))
						continue
					}
					fmt.Fprintf(a.stdout, "%-10s %s  kernel %s %s (%s)\n", d.Name(), g.Disk, g.KernelVersion, g.DockerImage, state(built))
				}
			}
			if len(errs) > 0 {
				return &ExitError{Code: ExitFailure, Err: errors.Join(errs...)}
			}
			return nil
		},
	}
	build.Flags().BoolVar(&vm, "vm", false, "also build each database's guest images for the vm and vm-docker platforms (the tree plus Debian's kernel and the QEMU guest agent, and with dockerd and the image loaded, under "+vmimage.DefaultRoot+")")
	build.Flags().StringSliceVar(&only, "dbms", nil, "only these databases (default: all: "+strings.Join(dbms.Names(), ", ")+")")
	list := &cobra.Command{
		Use:   "list",
		Short: "List boxbench's root filesystems and images with their database versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
