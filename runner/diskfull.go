package runner

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// noSpace is how a full filesystem reads in another program's message (a database's or a
// tool's output carried in an error as text, not as an errno).
const noSpace = "No space left on device"

// diskFull names the full disk behind err, for the run's reason: the database's own message
// ("MISCONF Errors writing to the AOF file: No space left on device") says neither which disk
// nor what to do. The work root holds every data directory and seed boxbench makes on the
// host, so it is named with its size and the space free now (after teardown removed the
// run's files, so usually more than at the failure). It returns "" when err is not ENOSPC.
func diskFull(err error, workRoot string) string {
	if err == nil || !errors.Is(err, syscall.ENOSPC) && !strings.Contains(err.Error(), noSpace) {
		return ""
	}
	var st unix.Statfs_t
	if serr := unix.Statfs(workRoot, &st); serr != nil {
		return fmt.Sprintf("disk full (%s): the work root %s cannot be inspected: %v", noSpace, workRoot, serr)
	}
	mib := func(blocks uint64) string { return fmt.Sprintf("%.0f MiB", float64(blocks)*float64(st.Bsize)/(1<<20)) }
	return fmt.Sprintf("disk full (%s): the work root %s is on a filesystem of %s with %s free after teardown; free space there or choose another --work-root",
		noSpace, workRoot, mib(st.Blocks), mib(st.Bavail))
}
