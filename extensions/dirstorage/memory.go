package dirstorage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// memoryFallbackBytes bounds what the clients keep in memory, all together,
// when the directory cannot be used: the sending queue's requests and
// the file offsets. It sits beside the axiom exporter's memory budget,
// within the sidecar's 96 MB peak RSS (README.md).
const memoryFallbackBytes = 2 << 20

// memStore keeps every client's keys in memory, within one byte budget:
// the degraded mode when the directory cannot be created or written. A
// key's bytes count its name and its value. As on a full disk, growing
// past the budget is storage.ErrStorageFull (the queue refuses new data,
// and the sources' when_full policies apply), while a small value written
// over an existing key, the queue's bookkeeping, always fits: a disk
// writes it in place.
type memStore struct {
	mu   sync.Mutex
	max  int64
	used int64
	data map[string][]byte
}

var errMemoryFull = fmt.Errorf("the state folder is unusable and the %d MiB kept in memory instead are full", memoryFallbackBytes>>20)

func newMemStore(max int64) *memStore {
	return &memStore{max: max, data: map[string][]byte{}}
}

// client returns the client whose keys live under prefix.
func (m *memStore) client(prefix string) *memClient {
	return &memClient{store: m, prefix: prefix + "/"}
}

type memClient struct {
	store  *memStore
	prefix string
}

var _ storage.Client = (*memClient)(nil)

func (c *memClient) Get(_ context.Context, key string) ([]byte, error) {
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	return c.store.data[c.prefix+key], nil
}

func (c *memClient) Set(_ context.Context, key string, value []byte) error {
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	return c.store.set(c.prefix+key, value)
}

func (c *memClient) Delete(_ context.Context, key string) error {
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	c.store.delete(c.prefix + key)
	return nil
}

// Batch applies ops in the order the directory's client does, so that a
// refused write leaves the bookkeeping as it was.
func (c *memClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	for _, op := range batchOrder(ops) {
		key := c.prefix + op.Key
		switch op.Type {
		case storage.Get:
			op.Value = c.store.data[key]
		case storage.Set:
			if err := c.store.set(key, op.Value); err != nil {
				return err
			}
		case storage.Delete:
			c.store.delete(key)
		default:
			return errors.New("dir_storage: unknown operation type")
		}
	}
	return nil
}

// Close keeps the keys: a client opened again in this process finds them.
func (*memClient) Close(context.Context) error { return nil }

// set stores a copy of value (the caller may reuse its buffer). Values
// are never changed once stored, so Get hands out the stored slice.
func (m *memStore) set(key string, value []byte) error {
	old, exists := m.data[key]
	grow := int64(len(value)) - int64(len(old))
	if !exists {
		grow += int64(len(key))
	}
	inPlace := exists && headerSize+len(value) <= inPlaceMax
	if grow > 0 && m.used+grow > m.max && !inPlace {
		return errors.Join(storage.ErrStorageFull, errMemoryFull)
	}
	m.data[key] = bytes.Clone(value)
	m.used += grow
	return nil
}

func (m *memStore) delete(key string) {
	if old, ok := m.data[key]; ok {
		m.used -= int64(len(key) + len(old))
		delete(m.data, key)
	}
}
