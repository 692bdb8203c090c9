// Package watchdog implements the watchdog extension: it fails the
// sidecar's liveness when its pipeline is wedged (a stage holds work and has
// made no progress for longer than it said it could), and never because
// Axiom is down, slow or limiting, or the disk is full. README.md says
// what counts as wedged and what happens then.
package watchdog

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/sidecarhq/sidecar/extensions/watchdog/internal/metadata"
	"github.com/sidecarhq/sidecar/internal/watchdog"
)

// NewFactory creates the factory of the watchdog extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

// defaultWedgedAfter is far beyond what a healthy stage overruns by (a GC
// pause, a starved CPU, a disk that stalls for seconds), and short beside
// the hours an app runs with nothing shipped.
const defaultWedgedAfter = 5 * time.Minute

func createDefaultConfig() component.Config {
	return &Config{WedgedAfter: defaultWedgedAfter}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newExtension(cfg.(*Config), set, watchdog.Default), nil
}
