package results

// The typed values of a run that something decides on: the report pairs runs by them, counts
// them and withholds verdicts by them. They are columns of the runs table (schema 2); the
// run's facts keep the prose that explains them, for people only.

// Steady is what steady-state detection (MSER, runner/precision.go) did with a run's measured
// window.
type Steady string

// The values of Steady. SteadyUnknown is a failed run's, and an older file's where the fact
// was absent or unreadable.
const (
	SteadyUnknown   Steady = ""
	SteadyOff       Steady = "off"        // the spec turned it off (steadyState: off)
	SteadyTooShort  Steady = "too_short"  // not applied: fewer intervals than MSER needs
	SteadyNoMinimum Steady = "no_minimum" // not applied: MSER found no truncation point
	SteadyCutFailed Steady = "cut_failed" // not applied: the cut MSER chose could not be made
	SteadySteady    Steady = "steady"     // applied: steady from the start, nothing cut
	SteadyCut       Steady = "cut"        // applied: a transient was cut from the start
)

// NotApplied says whether detection was on but left the window as it was measured.
func (s Steady) NotApplied() bool {
	return s == SteadyTooShort || s == SteadyNoMinimum || s == SteadyCutFailed
}

// Duet is a run's place in a duet (order: duet): both runs of one duet share Pair; Round is the
// round the duet ran in. The zero value is a run of no duet.
type Duet struct {
	Pair  string
	Round int
}

// Orchestrator is what a run's box recorded of the orchestrator it ran on (platform.Traits'
// Orchestrator): its name and its facts, in the order the report shows them, each with its
// label. The zero value is a run on none. It is the runs column orchestrator (schema 3);
// runs written before hold it only as facts, which reading translates (legacyOrchestrator).
type Orchestrator struct {
	Name  string             `json:"name,omitempty"`
	Facts []OrchestratorFact `json:"facts,omitempty"`
}

// OrchestratorFact is one fact of an Orchestrator: Key is the run's fact that holds it too,
// Label what the report calls it; Value "" where the box had none.
type OrchestratorFact struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Value string `json:"value"`
}
