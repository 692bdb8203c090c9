package dirstorage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/extensions/dirstorage/internal/metadata"
	"github.com/sidecarhq/sidecar/internal/selfmetrics"
)

type dirStorage struct {
	cfg *Config
	log *zap.Logger
	// inMemory is otelcol_extension_dir_storage_in_memory: 1 while mem
	// is used.
	inMemory metric.Int64Gauge
	attrs    metric.MeasurementOption
	// mem holds every client's keys when the directory is unusable; nil
	// while the directory works.
	mem *memStore
}

var _ storage.Extension = (*dirStorage)(nil)

func newExtension(cfg *Config, set extension.Settings) (*dirStorage, error) {
	b := selfmetrics.New(set.TelemetrySettings, metadata.ScopeName, component.KindExtension, set.ID)
	d := &dirStorage{cfg: cfg, log: set.Logger, attrs: b.Attributes(),
		inMemory: b.Gauge("in_memory", "1", "1 while the state folder cannot be used and the queue and offsets are kept in memory, 0 otherwise.")}
	return d, b.Err()
}

// Start creates the directory and proves it writable. A directory that
// cannot be used (a path below a file, a read-only volume, no permission) must
// not stop the sidecar: exiting would crash-loop it under Kubernetes and
// take the app's task down under ECS, and the app's output would go
// nowhere. So the sidecar runs on with its state in memory, within
// memoryFallbackBytes, says so once, and reports the reason in its health
// (a permanent error: a restart does not fix a volume).
//
// A full directory is still used: what an earlier run queued there is
// delivered, which makes room, and until then new data is refused as on
// a disk that fills while running.
func (d *dirStorage) Start(ctx context.Context, host component.Host) error {
	err := d.probe()
	switch {
	case err == nil:
		d.inMemory.Record(ctx, 0, d.attrs)
		return nil
	case errors.Is(err, storage.ErrStorageFull):
		d.inMemory.Record(ctx, 0, d.attrs)
		d.log.Warn(fmt.Sprintf("state folder %s is full: what is queued there is delivered, and new data is refused (each source's when_full policy) until there is room", d.cfg.Directory), zap.Error(err))
		return nil
	}
	d.mem = newMemStore(memoryFallbackBytes)
	d.inMemory.Record(ctx, 1, d.attrs)
	reason := fmt.Errorf("state folder %s is unusable (%w): the sending queue and file offsets are kept in memory instead, within %d MiB, and do not survive a restart; fix the volume mounted there (SIDECAR_STATE_DIR)",
		d.cfg.Directory, err, memoryFallbackBytes>>20)
	d.log.Warn(reason.Error())
	componentstatus.ReportStatus(host, componentstatus.NewPermanentErrorEvent(reason))
	return nil
}

// probe creates the directory and writes a file in it.
func (d *dirStorage) probe() error {
	if err := os.MkdirAll(d.cfg.Directory, 0o750); err != nil {
		return err
	}
	probe := filepath.Join(d.cfg.Directory, ".probe")
	if err := writeFile(probe, []byte("ok"), nil, d.cfg.FSync); err != nil {
		return fmt.Errorf("not writable: %w", err)
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
	sub := escape(strings.Join(parts, "_"))
	if d.mem != nil {
		return d.mem.client(sub), nil
	}
	dir := filepath.Join(d.cfg.Directory, sub)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	return &client{dir: dir, fsync: d.cfg.FSync}, nil
}
