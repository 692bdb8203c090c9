package axiomexporter

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"google.golang.org/protobuf/encoding/protowire"
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

// queueMetadataKey is where exporterhelper's persistent queue keeps its
// bookkeeping, in the storage client it names after the exporter and the
// signal; queueItemsField is the field of that protobuf message holding the
// records (log records, spans) in the queue, as an sfixed64
// (exporterhelper/internal/queue/meta.proto, v0.165.0).
const (
	queueMetadataKey = "qmv0"
	queueItemsField  = 1
)

// queuedOnDisk reads how many records the persistent queue, once shut
// down, holds for the next start: this run's and any left by earlier runs.
// A request that shutdown cut off stays counted there too.
func (b *base) queuedOnDisk(ctx context.Context) (int64, error) {
	client, err := b.storage.GetClient(ctx, component.KindExporter, b.set.ID, b.signal)
	if err != nil {
		return 0, err
	}
	meta, err := client.Get(ctx, queueMetadataKey)
	err = errors.Join(err, client.Close(ctx))
	if err != nil {
		return 0, err
	}
	return queueItems(meta)
}

// queueItems reads the records count of the queue's metadata; none is 0.
func queueItems(meta []byte) (int64, error) {
	for len(meta) > 0 {
		num, typ, n := protowire.ConsumeTag(meta)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		meta = meta[n:]
		if num == queueItemsField && typ == protowire.Fixed64Type {
			v, n := protowire.ConsumeFixed64(meta)
			if n < 0 {
				return 0, protowire.ParseError(n)
			}
			return max(0, int64(v)), nil
		}
		n = protowire.ConsumeFieldValue(num, typ, meta)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		meta = meta[n:]
	}
	return 0, nil
}
