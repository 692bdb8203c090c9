// Package metadata declares the watchdog extension's type and stability:
// the facts metadata.yaml states, in the shape mdatagen generates. Written
// by hand because mdatagen does not resolve at our collector version; the
// component tests check it against metadata.yaml.
package metadata

import "go.opentelemetry.io/collector/component"

var Type = component.MustNewType("watchdog")

const ExtensionStability = component.StabilityLevelDevelopment
