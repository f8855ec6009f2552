package telemetry

import (
	"errors"
	"os"
	"syscall"

	"github.com/prometheus/procfs"
)

// hostPressure reads host-wide PSI from /proc/pressure/{cpu,memory,io} (prometheus/procfs).
// A kernel without PSI, or booted with psi=0, has no such files: the values are absent.
type hostPressure struct{ fs procfs.FS }

func (hostPressure) name() string { return "host pressure" }

func (c hostPressure) collect(r reading) error {
	for _, res := range psiResources {
		st, err := c.fs.PSIStatsForResource(res)
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.EOPNOTSUPP) {
			continue // no PSI in this kernel, or disabled with psi=0
		}
		if err != nil {
			return err
		}
		if st.Some != nil {
			r.set("pressure_"+res+"_some_seconds_total", float64(st.Some.Total)/1e6)
		}
		if st.Full != nil {
			r.set("pressure_"+res+"_full_seconds_total", float64(st.Full.Total)/1e6)
		}
	}
	return nil
}
