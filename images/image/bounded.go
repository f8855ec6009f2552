package image

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
)

// AnswerTimeout bounds each question boxbench asks an engine about itself or what it holds
// (Info, Ping, ServerVersion, inspecting and listing images, containers, networks and volumes):
// an engine that accepts connections and never answers must not hang plan, doctor or a run.
// Calls that do work (pulls, builds, container starts, waits, logs) keep their callers' bounds.
const AnswerTimeout = 10 * time.Second

// Bound wraps an engine client so that every question listed at AnswerTimeout has that
// deadline (or the caller's sooner one), and an engine that did not answer in time is named in
// the error with the DOCKER_HOST it was reached at. The API version negotiation, which the
// client does on its first request, runs under that request's deadline.
// An engine that did not answer is not asked again for silentFor: each question gets the same
// error at once, so a plan of many cells or doctor's many findings waits AnswerTimeout once.
func Bound(c client.APIClient) client.APIClient {
	if b, ok := c.(bounded); ok {
		return b
	}
	return bounded{c, &silence{}}
}

// silentFor is how long an engine that did not answer is taken not to answer.
const silentFor = time.Minute

type bounded struct {
	client.APIClient
	quiet *silence
}

type silence struct {
	mu  sync.Mutex
	err error
	at  time.Time
}

// ask runs one question under AnswerTimeout and explains a missed deadline.
func ask[T any](b bounded, ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	var zero T
	b.quiet.mu.Lock()
	err, at := b.quiet.err, b.quiet.at
	b.quiet.mu.Unlock()
	if err != nil && time.Since(at) < silentFor {
		return zero, err
	}
	actx, cancel := context.WithTimeout(ctx, AnswerTimeout)
	defer cancel()
	v, err := call(actx)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		err = &NoAnswerError{Host: b.DaemonHost(), Err: err}
		b.quiet.mu.Lock()
		b.quiet.err, b.quiet.at = err, time.Now()
		b.quiet.mu.Unlock()
	}
	return v, err
}

// NoAnswerError is an engine that did not answer a question within AnswerTimeout.
type NoAnswerError struct {
	Host string // the engine's address, as the client dialled it
	Err  error
}

func (e *NoAnswerError) Error() string {
	where := "DOCKER_HOST=" + e.Host
	if os.Getenv("DOCKER_HOST") == "" {
		where = e.Host + " (DOCKER_HOST unset)"
	}
	return fmt.Sprintf("container engine at %s did not answer within %d s", where, int(AnswerTimeout/time.Second))
}

func (e *NoAnswerError) Unwrap() error { return e.Err }

func (b bounded) Info(ctx context.Context) (system.Info, error) {
	return ask(b, ctx, b.APIClient.Info)
}

func (b bounded) Ping(ctx context.Context) (types.Ping, error) {
	return ask(b, ctx, b.APIClient.Ping)
}

func (b bounded) ServerVersion(ctx context.Context) (types.Version, error) {
	return ask(b, ctx, b.APIClient.ServerVersion)
}

func (b bounded) ImageInspect(ctx context.Context, ref string, o ...client.ImageInspectOption) (image.InspectResponse, error) {
	return ask(b, ctx, func(ctx context.Context) (image.InspectResponse, error) {
		return b.APIClient.ImageInspect(ctx, ref, o...)
	})
}

func (b bounded) ImageList(ctx context.Context, o image.ListOptions) ([]image.Summary, error) {
	return ask(b, ctx, func(ctx context.Context) ([]image.Summary, error) { return b.APIClient.ImageList(ctx, o) })
}

func (b bounded) ContainerList(ctx context.Context, o container.ListOptions) ([]container.Summary, error) {
	return ask(b, ctx, func(ctx context.Context) ([]container.Summary, error) { return b.APIClient.ContainerList(ctx, o) })
}

func (b bounded) ContainerInspect(ctx context.Context, id string) (container.InspectResponse, error) {
	return ask(b, ctx, func(ctx context.Context) (container.InspectResponse, error) {
		return b.APIClient.ContainerInspect(ctx, id)
	})
}

func (b bounded) NetworkList(ctx context.Context, o network.ListOptions) ([]network.Summary, error) {
	return ask(b, ctx, func(ctx context.Context) ([]network.Summary, error) { return b.APIClient.NetworkList(ctx, o) })
}

func (b bounded) VolumeList(ctx context.Context, o volume.ListOptions) (volume.ListResponse, error) {
	return ask(b, ctx, func(ctx context.Context) (volume.ListResponse, error) { return b.APIClient.VolumeList(ctx, o) })
}

// EngineError names c's engine in err, unless err already does (a NoAnswerError).
func EngineError(c client.APIClient, err error) error {
	if na := (*NoAnswerError)(nil); errors.As(err, &na) {
		return err
	}
	return fmt.Errorf("container engine at %s: %w", c.DaemonHost(), err)
}
