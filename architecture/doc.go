// Package architecture holds no code: its test reads the layers of boxbench from
// docs/architecture.md ("Layers", one table row a layer, lowest first) and fails when a
// non-test package imports a package it may not, or sits in no layer.
//
// The rule: a package may import a package of a lower layer, or one of its own family (the
// same first path element, as platform/swarm imports platform/docker) in its own layer.
// Nothing else, and no list of exceptions.
//
// Its docs test holds the documentation's shape the same way: README.md within 8,000
// characters and linking docs/README.md, every document under docs/ linked from that index,
// every relative link resolving to a file and, where it names one, a heading, and no
// first-person narration outside docs/notebook/ (the dated history, kept verbatim).
package architecture
