// Package architecture holds no code: its test reads the layers of boxbench from
// docs/architecture.md ("Layers", one table row a layer, lowest first) and fails when a
// non-test package imports a package it may not, or sits in no layer.
//
// The rule: a package may import a package of a lower layer, or one of its own family (the
// same first path element, as platform/swarm imports platform/docker) in its own layer.
// Nothing else, and no list of exceptions.
package architecture
