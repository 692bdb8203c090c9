package axiomexporter

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/sidecarhq/sidecar/internal/queuemeta"
)

// queueStorage is the storage extension of the sending queue, nil when the
// queue is in memory.
func (b *base) queueStorage(host component.Host) (storage.Extension, error) {
	q := b.cfg.QueueConfig.Get()
	if q == nil || q.StorageID == nil {
		return nil, nil
	}
	ext, ok := host.GetExtensions()[*q.StorageID]
	if !ok {
		return nil, fmt.Errorf("storage: extension %q not found", *q.StorageID)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("storage: extension %q is not a storage extension", *q.StorageID)
	}
	return se, nil
}

// queuedOnDisk reads how many records the persistent queue, once shut
// down, holds for the next start: this run's and any left by earlier runs.
// A request that shutdown cut off stays counted there too.
func (b *base) queuedOnDisk(ctx context.Context) (int64, error) {
	client, err := b.storage.GetClient(ctx, component.KindExporter, b.set.ID, b.signal)
	if err != nil {
		return 0, err
	}
	meta, err := client.Get(ctx, queuemeta.Key)
	err = errors.Join(err, client.Close(ctx))
	if err != nil {
		return 0, err
	}
	m, err := queuemeta.Parse(meta)
	return m.Items, err
}
