// Package study judges what a published study found (the spec's published: block, whose value
// types and rules are package spec/published's) against this host's estimate of the same
// comparison.
package study

import "github.com/boxbench/boxbench/spec/published"

// Published is a study and the effects it reports (spec/published).
type Published = published.Published

// Effect is one published finding (spec/published).
type Effect = published.Effect

// Directions an effect can have (spec/published).
const (
	Slower = published.Slower
	Faster = published.Faster
	None   = published.None
)

// Directions are the valid values of Effect.Direction.
var Directions = published.Directions
