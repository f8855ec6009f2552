// Command runtimes registers boxbench's OCI runtimes with the local dockerd (scripts/setup.sh
// runs it): crun (when installed), runsc (gVisor's own network stack, netstack) and runsc-host
// (gVisor with the host's network stack, --network=host). It merges them into daemon.json,
// keeping everything else in it, and sends SIGHUP to the dockerd whose pid is in its pidfile
// when the file changed (or -force-reload). It prints "reloaded", "unchanged" or "not-running".
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/boxbench/boxbench/internal/dockerconf"
)

func main() {
	config := flag.String("config", "/etc/docker/daemon.json", "dockerd's configuration file")
	pidfile := flag.String("pidfile", "/var/run/docker.pid", "dockerd's pidfile")
	runsc := flag.String("runsc", "", "absolute path of the runsc binary to register")
	crun := flag.String("crun", "/usr/bin/crun", "crun binary, registered when it exists")
	force := flag.Bool("force-reload", false, "signal a running dockerd even when the file did not change")
	flag.Parse()
	if err := run(*config, *pidfile, *runsc, *crun, *force); err != nil {
		fmt.Fprintln(os.Stderr, "runtimes:", err)
		os.Exit(1)
	}
}

func run(config, pidfile, runsc, crun string, force bool) error {
	if runsc == "" {
		return fmt.Errorf("-runsc is required")
	}
	runsc, err := filepath.Abs(runsc)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(runsc); err != nil || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("-runsc %s is not an executable file", runsc)
	}
	rs := []dockerconf.Runtime{
		{Name: "runsc", Path: runsc},
		{Name: "runsc-host", Path: runsc, Args: []string{"--network=host"}},
	}
	if _, err := os.Stat(crun); err == nil {
		rs = append(rs, dockerconf.Runtime{Name: "crun", Path: crun})
	}
	changed, err := dockerconf.Write(config, rs)
	if err != nil {
		return err
	}
	pid, err := dockerconf.DaemonPID(pidfile)
	switch {
	case err != nil:
		return err
	case pid == 0:
		fmt.Println("not-running")
	case !changed && !force:
		fmt.Println("unchanged")
	default:
		if _, err := dockerconf.Reload(pidfile); err != nil {
			return fmt.Errorf("reload dockerd (pid %d): %w", pid, err)
		}
		fmt.Println("reloaded")
	}
	return nil
}
