package swarm

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
)

// kernelConfig is where the running kernel's build configuration is, when it exposes it.
var kernelConfig = "/proc/config.gz"

// kernelHas returns an error naming option when the running kernel's configuration says it was
// built without it (a kernel without loadable modules cannot get it later). An unreadable or
// absent configuration is not an error: the trial (Probe, or the provision's own check) decides.
func kernelHas(option, why string) error {
	f, err := os.Open(kernelConfig)
	if err != nil {
		return nil
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil
	}
	set, known := parseKernelConfig(z, option)
	if known && !set {
		return fmt.Errorf("the kernel has no %s (%s is not set in %s): %s", strings.TrimPrefix(option, "CONFIG_"), option, kernelConfig, why)
	}
	return nil
}

// parseKernelConfig says whether option is built in or a module (set), and whether the
// configuration mentions it at all (known).
func parseKernelConfig(r io.Reader, option string) (set, known bool) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		switch {
		case line == "# "+option+" is not set":
			return false, true
		case strings.HasPrefix(line, option+"="):
			v := strings.TrimPrefix(line, option+"=")
			return v == "y" || v == "m", true
		}
	}
	return false, false
}
