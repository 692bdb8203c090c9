package dirstorage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

type dirStorage struct {
	cfg *Config
	log *zap.Logger
}

var _ storage.Extension = (*dirStorage)(nil)

func newExtension(cfg *Config, log *zap.Logger) *dirStorage {
	return &dirStorage{cfg: cfg, log: log}
}

// Start creates the directory and proves it writable, so that a missing,
// read-only or full state folder is one clear error at start instead of
// data refused later.
func (d *dirStorage) Start(context.Context, component.Host) error {
	if err := os.MkdirAll(d.cfg.Directory, 0o750); err != nil {
		return fmt.Errorf("state directory %s: %w", d.cfg.Directory, err)
	}
	probe := filepath.Join(d.cfg.Directory, ".probe")
	if err := writeFile(probe, []byte("ok"), d.cfg.FSync); err != nil {
		return fmt.Errorf("state directory %s is not writable: %w", d.cfg.Directory, err)
	}
	return os.Remove(probe)
}

func (d *dirStorage) Shutdown(context.Context) error { return nil }

// GetClient opens the client's own sub-directory, named after the component
// and the storage name as file_storage names its files, so two clients never
// share a key.
func (d *dirStorage) GetClient(_ context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	parts := []string{strings.ToLower(kind.String()), id.Type().String(), id.Name()}
	if name != "" {
		parts = append(parts, name)
	}
	dir := filepath.Join(d.cfg.Directory, escape(strings.Join(parts, "_")))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	return &client{dir: dir, fsync: d.cfg.FSync}, nil
}
