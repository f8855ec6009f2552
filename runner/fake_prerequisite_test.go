package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/boxbench/boxbench/internal/prereq"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/fake"
	"github.com/boxbench/boxbench/spec"
)

// A cell that waits for a command (its platform's Check says an image is not built) is refused
// by Run before any box is provisioned or any run stored, and the error names the command.
func TestFakePrerequisite(t *testing.T) {
	need := prereq.Need{What: "fake's image is not built", Command: "boxbench images build --dbms fake"}
	var provisions atomic.Int32
	f := newFake(t, "", "", fake.Options{Fault: func(point string, _ platform.Request) error {
		switch point {
		case fake.FaultCheck:
			return prereq.New(need, errors.New("image not built"))
		case fake.FaultProvision:
			provisions.Add(1)
		}
		return nil
	}})
	sum, err := f.run(context.Background(), false)
	// Not the planner's "no cell of the matrix can run" (a skip would name the command too):
	// the cell is planned, and refused as waiting for it.
	var problems *spec.Error
	if err == nil || errors.As(err, &problems) || !strings.Contains(err.Error(), "`"+need.Command+"` (1 cell(s) wait for it)") {
		t.Fatalf("Run = %+v, %v; want a refusal naming the command", sum, err)
	}
	if n := provisions.Load(); n != 0 || sum.OK+sum.Failed != 0 {
		t.Errorf("%d provisions, %d runs before the refusal", n, sum.OK+sum.Failed)
	}
}
