package dirstorage

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// client keeps each key in a file of its own. A write goes to a temporary
// file that is then renamed over the key's file, so a reader (or the next
// process, after kill -9) sees the old value or the new one, never a mix.
type client struct {
	dir   string
	fsync bool
	mu    sync.Mutex // one operation or batch at a time, like a transaction
}

var _ storage.Client = (*client)(nil)

func (c *client) Get(_ context.Context, key string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.get(key)
}

func (c *client) Set(_ context.Context, key string, value []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set(key, value)
}

func (c *client) Delete(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.delete(key)
}

// Batch applies ops on distinct keys last first: exporterhelper's queue
// writes its bookkeeping key first and the item it describes second (or
// deletes it second), so after a kill between the two the bookkeeping
// never points past what is on disk and no deleted item's file stays
// behind. Ops that touch one key twice are applied in order.
func (c *client) Batch(_ context.Context, ops ...*storage.Operation) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	order := make([]*storage.Operation, len(ops))
	seen := make(map[string]bool, len(ops))
	distinct := true
	for i, op := range ops {
		distinct = distinct && !seen[op.Key]
		seen[op.Key] = true
		order[len(ops)-1-i] = op
	}
	if !distinct {
		order = ops
	}
	for _, op := range order {
		var err error
		switch op.Type {
		case storage.Get:
			op.Value, err = c.get(op.Key)
		case storage.Set:
			err = c.set(op.Key, op.Value)
		case storage.Delete:
			err = c.delete(op.Key)
		default:
			err = errors.New("dir_storage: unknown operation type")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *client) Close(context.Context) error { return nil }

func (c *client) path(key string) string { return filepath.Join(c.dir, escape(key)) }

func (c *client) get(key string) ([]byte, error) {
	b, err := os.ReadFile(c.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func (c *client) set(key string, value []byte) error {
	return writeFile(c.path(key), value, c.fsync)
}

func (c *client) delete(key string) error {
	err := os.Remove(c.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// writeFile replaces path with data through a temporary file and a rename.
// A full disk is storage.ErrStorageFull, which the queue reports as such.
func writeFile(path string, data []byte, fsync bool) error {
	tmp := path + "#" // escape never leaves a '#' in a key's file name
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			return errors.Join(storage.ErrStorageFull, err)
		}
	}
	return err
}

// escape makes a key a safe file name: no path separators, and "." and
// ".." (and the empty key) spelled as escapes.
func escape(key string) string {
	switch s := url.PathEscape(key); s {
	case "":
		return "%00"
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	default:
		return s
	}
}
