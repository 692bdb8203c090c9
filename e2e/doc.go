// Package e2e holds the end-to-end tests: they build the real sidecar binary,
// start it with a config, speak the real protocols to it and check what
// arrives at the fake Axiom (internal/axiomtest).
package e2e
