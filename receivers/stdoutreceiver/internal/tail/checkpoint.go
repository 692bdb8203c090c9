package tail

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// fingerprintSize is how many leading bytes identify a file's content. A
// file shorter than that has a fingerprint over all its bytes, which grows
// with the file until it is full.
const fingerprintSize = 1024

// checkpointKey is the storage key of the offsets; the storage client is the
// receiver's own, so the key only needs to be unique within it.
const checkpointKey = "tail.offsets"

// fingerprint is a hash of a file's first Len bytes. Together with the
// device and inode it tells a file we know from one that only reuses its
// inode (deleted and recreated) or its path (rotated).
type fingerprint struct {
	Len int    `json:"len"`
	Sum uint64 `json:"sum"`
}

// fnv64a hashes b (FNV-1a): stable across restarts and free of allocations.
func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// readFingerprint hashes the first min(size, fingerprintSize) bytes of f
// using buf (at least fingerprintSize long) and returns those bytes too, so
// the caller can check an older, shorter fingerprint against the same read.
func readFingerprint(f *os.File, size int64, buf []byte) (fingerprint, []byte, error) {
	n := int(min(size, fingerprintSize))
	got, err := f.ReadAt(buf[:n], 0)
	if err != nil && err != io.EOF {
		return fingerprint{}, nil, err
	}
	return fingerprint{Len: got, Sum: fnv64a(buf[:got])}, buf[:got], nil
}

// matches reports whether head (a file's first bytes) starts with the
// content fp was taken from.
func (fp fingerprint) matches(head []byte) bool {
	return len(head) >= fp.Len && fnv64a(head[:fp.Len]) == fp.Sum
}

// checkpointEntry is one file's resume point: Offset is the end of the last
// complete line the pipeline accepted.
type checkpointEntry struct {
	Path        string      `json:"path"` // informational: files are matched by Dev, Ino and Fingerprint
	Dev         uint64      `json:"dev"`
	Ino         uint64      `json:"ino"`
	Fingerprint fingerprint `json:"fp"`
	Offset      int64       `json:"offset"`
}

type checkpoint struct {
	Version int               `json:"version"`
	Files   []checkpointEntry `json:"files"`
}

func (t *Tailer) loadCheckpoint(ctx context.Context) error {
	if t.set.Storage == nil {
		return nil
	}
	raw, err := t.set.Storage.Get(ctx, checkpointKey)
	if err != nil {
		return fmt.Errorf("files: reading offsets: %w", err)
	}
	if raw == nil {
		return nil
	}
	var cp checkpoint
	if err := json.Unmarshal(raw, &cp); err != nil || cp.Version != 1 {
		// Starting as if there were no checkpoint loses nothing that
		// start_at would keep; refusing to start would stop all shipping.
		t.set.Logger.Warn("Ignoring unreadable file offsets checkpoint", zapErr(err))
		return nil
	}
	t.known = cp.Files
	t.resumed = true
	return nil
}

func (t *Tailer) saveCheckpoint(ctx context.Context) error {
	if t.set.Storage == nil {
		return nil
	}
	cp := checkpoint{Version: 1, Files: make([]checkpointEntry, 0, len(t.files))}
	for _, f := range t.files {
		cp.Files = append(cp.Files, checkpointEntry{Path: f.path, Dev: f.dev, Ino: f.ino, Fingerprint: f.fp, Offset: f.offset})
	}
	raw, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	if err := t.set.Storage.Set(ctx, checkpointKey, raw); err != nil {
		return fmt.Errorf("files: writing offsets: %w", err)
	}
	t.dirty = false
	return nil
}

// resumeOffset returns where a newly found file continues, if the
// checkpoint knows it: same device and inode, and its first bytes still
// match the fingerprint (otherwise the inode was reused by another file).
func (t *Tailer) resumeOffset(dev, ino uint64, head []byte, size int64) (int64, bool) {
	for _, e := range t.known {
		if e.Dev != dev || e.Ino != ino || !e.Fingerprint.matches(head) {
			continue
		}
		if e.Offset > size { // truncated while we were away (copytruncate)
			return 0, true
		}
		return e.Offset, true
	}
	return 0, false
}
