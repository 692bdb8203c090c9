// Package metadata declares the otlp receiver's type and its stability per
// signal: the facts metadata.yaml states, in the shape mdatagen generates
// (Type, <Signal>Stability). It is written by hand because mdatagen does
// not resolve at our collector version; the component tests check it
// against metadata.yaml. The receiver has no self-metrics of its own
// (receiverhelper's are the collector's), so no ScopeName.
package metadata

import "go.opentelemetry.io/collector/component"

var Type = component.MustNewType("otlp")

const (
	TracesStability  = component.StabilityLevelDevelopment
	MetricsStability = component.StabilityLevelDevelopment
	LogsStability    = component.StabilityLevelDevelopment
)
