package runner

import "github.com/boxbench/boxbench/plan"

// Progress is told what the runner does. Calls come from one goroutine.
type Progress interface {
	// Begin: total runs planned, of which done are already stored (resume).
	Begin(total, done int)
	// Add: adaptive repetitions added n runs.
	Add(n int)
	// Phase: run entered a phase ("load", "provision", "quiet start", "warmup+measure",
	// "teardown").
	Phase(run plan.Run, phase string)
	// End: run finished with status "ok" or "failed" (reason set).
	End(run plan.Run, status, reason string)
	Finish()
}

type nopProgress struct{}

func (nopProgress) Begin(int, int)               {}
func (nopProgress) Add(int)                      {}
func (nopProgress) Phase(plan.Run, string)       {}
func (nopProgress) End(plan.Run, string, string) {}
func (nopProgress) Finish()                      {}
