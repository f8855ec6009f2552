package builtin

import (
	"log/slog"

	"github.com/boxbench/boxbench/platform"
)

// extraPlatforms lists the container platforms.
func extraPlatforms(log *slog.Logger) map[string]platform.Platform {
	return map[string]platform.Platform{}
}
