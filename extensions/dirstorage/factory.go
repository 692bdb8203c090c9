// Package dirstorage implements the dir_storage extension: a storage
// extension (the one exporterhelper's persistent queue and the stdout
// receiver's file offsets use) that keeps each key in a file of its own in
// a directory. README.md says why it exists beside contrib's file_storage.
package dirstorage

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/sidecarhq/sidecar/extensions/dirstorage/internal/metadata"
)

// NewFactory creates the factory of the dir_storage extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newExtension(cfg.(*Config), set)
}
