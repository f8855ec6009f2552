package builtin

import (
	"log/slog"

	"github.com/boxbench/boxbench/image"
	"github.com/boxbench/boxbench/platform"
	"github.com/boxbench/boxbench/platform/docker"
)

// extraPlatforms lists the container platforms. Docker is listed whenever a client can be made
// (DOCKER_HOST honoured); an unreachable engine is reported by Check with the engine's error.
func extraPlatforms(log *slog.Logger) map[string]platform.Platform {
	ps := map[string]platform.Platform{}
	if engine, err := image.Connect(); err == nil {
		ps["docker"] = docker.New(engine, log)
	}
	return ps
}
