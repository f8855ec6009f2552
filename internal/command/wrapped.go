package command

import (
	"context"
	"errors"
)

// RunWrapped runs prefix followed by argv — a wrapper that enters a box (joins its cgroup,
// attaches to its namespaces) and then execs argv — and reports a failure with argv alone: the
// caller asked for argv, and the wrapper's argv would only hide it.
func RunWrapped(ctx context.Context, o Options, prefix, argv []string) ([]byte, error) {
	full := append(append([]string(nil), prefix...), argv...)
	out, err := RunWith(ctx, o, full...)
	if ce := (*Error)(nil); errors.As(err, &ce) {
		ce.Argv = argv
	}
	return out, err
}
