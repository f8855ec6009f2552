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

// AnswerTimeout bounds each question boxbench asks an engine about itself (Info, Ping,
// ServerVersion), ListTimeout each about what it holds (inspecting and listing images,
// containers, networks and volumes): an engine that accepts connections and never answers must
// not hang plan, doctor or a run. Calls that do work (pulls, imports, container starts, stops,
// waits, logs) keep their callers' bounds: a response-header timeout on the transport would cut
// a container stop or wait short, so there is none.
const (
	AnswerTimeout = 10 * time.Second
	ListTimeout   = 30 * time.Second
)

// Bound wraps an engine client so that every question listed at AnswerTimeout has its deadline
// (or the caller's sooner one), and an engine that did not answer in time is named in the error
// with the DOCKER_HOST it was reached at. The API version negotiation, which the client does on
// its first request, runs under that request's deadline. An engine that has never answered and
// then misses a deadline is taken to be silent for silentFor: each question gets the same error
// at once, so a plan of many cells or doctor's many findings waits once. One that has answered
// before is asked every time (a busy engine is slow, not gone).
func Bound(c client.APIClient) client.APIClient {
	if b, ok := c.(bounded); ok {
		return b
	}
	return bounded{c, &silence{}}
}

// silentFor is how long an engine that never answered is taken not to answer.
const silentFor = time.Minute

type bounded struct {
	client.APIClient
	quiet *silence
}

type silence struct {
	mu       sync.Mutex
	answered bool
	err      error
	at       time.Time
}

// ask runs one question under timeout and explains a missed deadline.
func ask[T any](b bounded, ctx context.Context, timeout time.Duration, call func(context.Context) (T, error)) (T, error) {
	var zero T
	q := b.quiet
	q.mu.Lock()
	err, at := q.err, q.at
	q.mu.Unlock()
	if err != nil && time.Since(at) < silentFor {
		return zero, err
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := call(actx)
	missed := err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded)
	if missed {
		err = &NoAnswerError{Host: b.DaemonHost(), Timeout: timeout, Err: err}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case !missed && ctx.Err() == nil:
		q.answered, q.err = true, nil
	case missed && !q.answered:
		q.err, q.at = err, time.Now()
	}
	return v, err
}

// NoAnswerError is an engine that did not answer a question within its timeout.
type NoAnswerError struct {
	Host    string // the engine's address, as the client dialled it
	Timeout time.Duration
	Err     error
}

func (e *NoAnswerError) Error() string {
	where := "DOCKER_HOST=" + e.Host
	if os.Getenv("DOCKER_HOST") == "" {
		where = e.Host + " (DOCKER_HOST unset)"
	}
	return fmt.Sprintf("container engine at %s did not answer within %d s", where, int(e.Timeout/time.Second))
}

func (e *NoAnswerError) Unwrap() error { return e.Err }

func (b bounded) Info(ctx context.Context) (system.Info, error) {
	return ask(b, ctx, AnswerTimeout, b.APIClient.Info)
}

func (b bounded) Ping(ctx context.Context) (types.Ping, error) {
	return ask(b, ctx, AnswerTimeout, b.APIClient.Ping)
}

func (b bounded) ServerVersion(ctx context.Context) (types.Version, error) {
	return ask(b, ctx, AnswerTimeout, b.APIClient.ServerVersion)
}

func (b bounded) ImageInspect(ctx context.Context, ref string, o ...client.ImageInspectOption) (image.InspectResponse, error) {
	return ask(b, ctx, ListTimeout, func(ctx context.Context) (image.InspectResponse, error) {
		return b.APIClient.ImageInspect(ctx, ref, o...)
	})
}

func (b bounded) ImageList(ctx context.Context, o image.ListOptions) ([]image.Summary, error) {
	return ask(b, ctx, ListTimeout, func(ctx context.Context) ([]image.Summary, error) { return b.APIClient.ImageList(ctx, o) })
}

func (b bounded) ContainerList(ctx context.Context, o container.ListOptions) ([]container.Summary, error) {
	return ask(b, ctx, ListTimeout, func(ctx context.Context) ([]container.Summary, error) { return b.APIClient.ContainerList(ctx, o) })
}

func (b bounded) ContainerInspect(ctx context.Context, id string) (container.InspectResponse, error) {
	return ask(b, ctx, ListTimeout, func(ctx context.Context) (container.InspectResponse, error) {
		return b.APIClient.ContainerInspect(ctx, id)
	})
}

func (b bounded) NetworkList(ctx context.Context, o network.ListOptions) ([]network.Summary, error) {
	return ask(b, ctx, ListTimeout, func(ctx context.Context) ([]network.Summary, error) { return b.APIClient.NetworkList(ctx, o) })
}

func (b bounded) VolumeList(ctx context.Context, o volume.ListOptions) (volume.ListResponse, error) {
	return ask(b, ctx, ListTimeout, func(ctx context.Context) (volume.ListResponse, error) { return b.APIClient.VolumeList(ctx, o) })
}

// EngineError names c's engine in err, unless err already does (a NoAnswerError).
func EngineError(c client.APIClient, err error) error {
	if na := (*NoAnswerError)(nil); errors.As(err, &na) {
		return err
	}
	return fmt.Errorf("container engine at %s: %w", c.DaemonHost(), err)
}
