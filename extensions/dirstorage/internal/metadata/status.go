// Package metadata declares the dir_storage extension's type, stability and
// the instrumentation scope of its self-metric:
// the facts metadata.yaml states, in the shape mdatagen generates. Written by
// hand because mdatagen does not resolve at our collector version; the
// component tests check it against metadata.yaml.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("dir_storage")
	ScopeName = "github.com/sidecarhq/sidecar/extensions/dirstorage"
)

const ExtensionStability = component.StabilityLevelDevelopment
