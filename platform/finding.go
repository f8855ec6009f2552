package platform

import (
	"context"
	"strings"

	"github.com/boxbench/boxbench/internal/command"
)

// ToolFinding runs a tool's version command (argv, bounded by ctx) for doctor: a finding named
// name in area, ok with the first line of the tool's output as its detail, or carrying the
// command's error (its argv and output) and fix.
func ToolFinding(ctx context.Context, area, name, fix string, argv ...string) Finding {
	out, err := command.Run(ctx, argv...)
	if err != nil {
		return Finding{Area: area, Name: name, Detail: err.Error(), Fix: fix}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return Finding{Area: area, Name: name, OK: true, Detail: first}
}
