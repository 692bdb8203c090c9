// Package metadata declares the sampling processor's type, its stability
// per signal and the instrumentation scope of its self-metrics: the facts
// metadata.yaml states, in the shape mdatagen generates (Type, ScopeName,
// <Signal>Stability). It is written by hand because mdatagen does not
// resolve at our collector version; the component tests check it against
// metadata.yaml.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("sampling")
	ScopeName = "github.com/sidecarhq/sidecar/sampling"
)

const (
	TracesStability = component.StabilityLevelDevelopment
	LogsStability   = component.StabilityLevelDevelopment
)
