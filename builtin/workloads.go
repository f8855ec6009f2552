package builtin

import (
	"fmt"

	"github.com/boxbench/boxbench/plan"
	"github.com/boxbench/boxbench/spec"
	"github.com/boxbench/boxbench/workload"
)

// Workload builds the workload of one cell.
func Workload(e *spec.Experiment, c *plan.Cell) (workload.Workload, error) {
	return nil, fmt.Errorf("workload %s: not wired yet", e.Workload.Type)
}
