package dirstorage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"github.com/klauspost/compress/s2"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"golang.org/x/sys/unix"
)

// client keeps each key in a file of its own: a header (magic and the
// value's length) and the value. A new key, or a value too large for one
// page, goes to a temporary file that is then renamed over the key's file.
// A small value for a key that exists (the queue's bookkeeping, rewritten
// for every request) is written over the file in place, header and value in
// one write within the first page, through a file kept open: creating and
// renaming a file for each of those writes cost a fifth of the log path's
// CPU. Either way a reader, or the next process after kill -9, sees the old
// value or the new one, never a mix (a write within one page is not torn by
// the process's death; a power loss is fsync's business).
type client struct {
	dir   string
	fsync bool
	mu    sync.Mutex // one operation or batch at a time, like a transaction
	open  map[string]*os.File
	// doomed are keys a batch of deletes only asked to delete, with a hash
	// of their value: they read as deleted, but their files go only when a
	// Set moves them (see moveDoomed), at the next batch that reads, or at
	// Close. See deferDeletes.
	doomed map[string]uint64
	seed   maphash.Seed
	// spares are files of deleted keys kept for the next writes through
	// a file (see reuseSpare), at most maxSpares, by slot.
	spares [maxSpares]bool
	// packed is the buffer large values are compressed into (see pack),
	// kept between writes: a fresh one costs its first touches.
	packed []byte
}

// File layout: magic, then the value's length (little endian), then the
// value; with packedMagic, the value is an S2 block (see pack).
const (
	magic       = "ds\x00\x01"
	packedMagic = "ds\x00\x02"
	headerSize  = len(magic) + 4
	// packMin is the smallest value set compresses: below it (the queue's
	// bookkeeping) a value is written as it is.
	packMin = 16 << 10
	// maxPackedKept bounds the compression buffer kept between writes.
	maxPackedKept = 5 << 20
	// inPlaceMax is the largest header and value written in place: one page.
	inPlaceMax = 4096
	// maxOpen bounds the files kept open for in-place writes.
	maxOpen = 8
	// maxSpares bounds the deleted keys' files kept for reuse, and
	// maxSpareSize the size of each: what they hold beyond the queue's
	// disk budget.
	maxSpares    = 8
	maxSpareSize = 4 << 20
)

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

// Batch applies ops in batchOrder.
func (c *client) Batch(_ context.Context, ops ...*storage.Operation) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deferDeletes(ops) {
		return nil
	}
	reads := false
	var moves []move
	for _, op := range batchOrder(ops) {
		var err error
		switch op.Type {
		case storage.Get:
			op.Value, err = c.get(op.Key)
			reads = true
		case storage.Set:
			delete(c.doomed, op.Key)
			if from := c.doomedTwin(op.Value); from != "" {
				moves = append(moves, move{from, op.Key, op.Value})
				continue
			}
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
	for _, m := range moves {
		if err := c.moveDoomed(m); err != nil {
			return err
		}
	}
	if reads {
		return c.deleteDoomed()
	}
	return nil
}

// batchOrder applies ops on distinct keys last first: exporterhelper's
// queue writes its bookkeeping key first and the item it describes second
// (or deletes it second), so after a kill between the two, or a write
// refused for want of room, the bookkeeping never points past what is
// stored and no deleted item's file stays behind. Ops that touch one key
// twice are applied in order.
func batchOrder(ops []*storage.Operation) []*storage.Operation {
	order := make([]*storage.Operation, len(ops))
	seen := make(map[string]bool, len(ops))
	for i, op := range ops {
		if seen[op.Key] {
			return ops
		}
		seen[op.Key] = true
		order[len(ops)-1-i] = op
	}
	return order
}

// move is a Set whose value a doomed key's file already holds.
type move struct {
	from, to string
	value    []byte
}

// doomedTwin returns a doomed key whose value is value, or "". Only a key
// with the same hash is read, so a move of n requests reads each once.
func (c *client) doomedTwin(value []byte) string {
	if len(c.doomed) == 0 {
		return ""
	}
	h := maphash.Bytes(c.seed, value)
	for key, kh := range c.doomed {
		if kh != h {
			continue
		}
		if v, err := c.read(key); err == nil && bytes.Equal(v, value) {
			return key
		}
	}
	return ""
}

// moveDoomed renames a doomed key's file to the key a Set gives its value,
// after the rest of the batch. This is the second half of the persistent
// queue's move at start (deferDeletes is the first): each request it writes
// again under a new key is the file of an old key, so the old key is gone
// the moment the new one exists. A kill during the move then leaves every
// request once: moved, or still under its old key, which the bookkeeping
// (rewritten with each move, and still listing the old keys as being sent)
// makes the next start move. Without the rename the old files stayed, and
// the next start moved the ones already moved a second time: they were sent
// twice (20-35% of all records in e2e/chaos_test.go). The rename comes after
// the batch's bookkeeping write, so a kill between the two leaves the old
// key listed and on disk, and the new key missing, which the queue skips.
func (c *client) moveDoomed(m move) error {
	delete(c.doomed, m.from)
	c.forget(m.from)
	c.forget(m.to)
	if err := unix.Rename(c.path(m.from), c.path(m.to)); err != nil {
		return c.set(m.to, m.value)
	}
	return nil
}

// deferDeletes takes a batch of nothing but deletes and only marks its
// keys deleted, reporting whether it did. exporterhelper's persistent
// queue, when it starts, moves the requests an earlier process was
// sending to the back of the queue by reading them, deleting them in one
// batch, and then writing them again one by one under new keys: a kill
// between the delete and the last write would lose them. Each file stays
// until a write moves it (moveDoomed), the queue next reads (a consumer
// taking a request, which happens only after the move) or closes. Killed
// before that, the next start finds them still listed as being sent and
// moves those not yet moved.
func (c *client) deferDeletes(ops []*storage.Operation) bool {
	for _, op := range ops {
		if op.Type != storage.Delete {
			return false
		}
	}
	if c.doomed == nil {
		c.doomed = map[string]uint64{}
		c.seed = maphash.MakeSeed()
	}
	for _, op := range ops {
		// The queue has just read these values: the reads hit the cache.
		// An unreadable one is doomed all the same; its hash matches no
		// value that bytes.Equal would confirm.
		var h uint64
		if v, err := c.read(op.Key); err == nil && v != nil {
			h = maphash.Bytes(c.seed, v)
		}
		c.doomed[op.Key] = h
	}
	return true
}

func (c *client) deleteDoomed() error {
	var errs []error
	for key := range c.doomed {
		errs = append(errs, c.remove(key))
		delete(c.doomed, key)
	}
	return errors.Join(errs...)
}

func (c *client) Close(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	errs := []error{c.deleteDoomed()}
	for slot, kept := range c.spares {
		if kept {
			errs = append(errs, os.Remove(c.sparePath(slot)))
			c.spares[slot] = false
		}
	}
	for key, f := range c.open {
		errs = append(errs, f.Close())
		delete(c.open, key)
	}
	return errors.Join(errs...)
}

func (c *client) path(key string) string { return filepath.Join(c.dir, escape(key)) }

func (c *client) get(key string) ([]byte, error) {
	if _, doomed := c.doomed[key]; doomed {
		return nil, nil
	}
	return c.read(key)
}

// read returns the value in key's file, doomed or not.
func (c *client) read(key string) ([]byte, error) {
	path := c.path(key)
	b, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(b) < headerSize || (string(b[:len(magic)]) != magic && string(b[:len(magic)]) != packedMagic) {
		return nil, fmt.Errorf("dir_storage: %s is not a value this extension wrote", path)
	}
	n := int(binary.LittleEndian.Uint32(b[len(magic):headerSize]))
	if headerSize+n > len(b) {
		return nil, fmt.Errorf("dir_storage: %s is cut short", path)
	}
	v := b[headerSize : headerSize+n]
	if string(b[:len(magic)]) == packedMagic {
		if v, err = s2.Decode(nil, v); err != nil {
			return nil, fmt.Errorf("dir_storage: %s: %w", path, err)
		}
	}
	return v, nil
}

// readFile is os.ReadFile in four system calls (open, fstat, one read,
// close) on the file descriptor: os.ReadFile makes an os.File, which
// tries to register each file with the poller (two fcntls, refused for a
// regular file), and reads until a read returns nothing.
func readFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	b := make([]byte, st.Size)
	for n := 0; n < len(b); {
		m, err := unix.Pread(fd, b[n:], int64(n))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		case m == 0: // shorter than it was: a reader of a file being replaced sees the old or the new one whole
			return b[:n], nil
		}
		n += m
	}
	return b, nil
}

func (c *client) set(key string, value []byte) error {
	var header [headerSize]byte
	copy(header[:], magic)
	binary.LittleEndian.PutUint32(header[len(magic):], uint32(len(value)))
	if headerSize+len(value) <= inPlaceMax {
		if f := c.openExisting(key); f != nil {
			_, err := f.WriteAt(append(header[:], value...), 0)
			if err == nil && c.fsync {
				err = f.Sync()
			}
			return err
		}
	}
	c.forget(key) // the rename replaces the file an open handle points at
	value = c.pack(header[:], value)
	if c.reuseSpare(c.path(key), header[:], value) {
		return nil
	}
	return writeFile(c.path(key), header[:], value, c.fsync)
}

// pack compresses a value of at least packMin bytes with S2 into c.packed
// and, when that is smaller by an eighth or more, sets header to
// packedMagic and the packed length and returns the packed value; else it
// returns value as it is. With the queue on disk at its maximum rate the
// kernel's copy of each request into fresh page-cache pages was a quarter
// of the sidecar's CPU (~3 ms per MiB on this project's Firecracker host):
// S2 costs ~0.4 ms per MiB and makes pino lines ~7x smaller. A value is
// still written whole before the rename that makes it visible, so crash
// safety is unchanged.
func (c *client) pack(header, value []byte) []byte {
	if len(value) < packMin {
		return value
	}
	need := s2.MaxEncodedLen(len(value))
	if need < 0 {
		return value
	}
	buf := c.packed
	if cap(buf) < need {
		buf = make([]byte, need)
	}
	packed := s2.Encode(buf[:need], value)
	if need <= maxPackedKept {
		c.packed = buf
	}
	if len(packed) > len(value)-len(value)/8 {
		return value
	}
	copy(header, packedMagic)
	binary.LittleEndian.PutUint32(header[len(magic):], uint32(len(packed)))
	return packed
}

// Spare files. Writing a request into a new file makes the kernel take
// fresh pages for its page cache, and deleting the file gives them back: on
// a VM (the benchmark host is Firecracker) touching such pages costs more
// than copying the bytes (a 1 MiB write into a new file 0.22-0.28 ms of CPU,
// over a cached one 0.07-0.08 ms). So a deleted key's file is renamed to a
// spare (a name escape never makes) instead of being unlinked, and the next
// write through a file overwrites a spare, truncates it to its new size and
// renames it over the key: still atomic for readers and after kill -9, as
// the rename comes after the write (and after fsync when it is on). Spares
// are at most maxSpares files of up to maxSpareSize; Close unlinks them, and
// a spare left by a killed process is replaced when its slot is next used.
func (c *client) sparePath(slot int) string {
	return filepath.Join(c.dir, "#spare"+strconv.Itoa(slot))
}

// keepSpare renames path to a free spare slot, reporting whether it did
// (false when the slots are full, the file is too large or missing).
func (c *client) keepSpare(path string) bool {
	slot := slices.Index(c.spares[:], false)
	if slot < 0 {
		return false
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Size > maxSpareSize {
		return false
	}
	if unix.Rename(path, c.sparePath(slot)) != nil {
		return false
	}
	c.spares[slot] = true
	return true
}

// reuseSpare writes header and value over a spare and renames it to
// path, reporting whether it did; when it did not, the caller writes a new
// file. A spare that fails is unlinked.
func (c *client) reuseSpare(path string, header, value []byte) bool {
	slot := slices.Index(c.spares[:], true)
	if slot < 0 {
		return false
	}
	c.spares[slot] = false
	spare := c.sparePath(slot)
	if err := overwrite(spare, header, value, c.fsync); err != nil || unix.Rename(spare, path) != nil {
		_ = unix.Unlink(spare)
		return false
	}
	return true
}

// overwrite replaces the contents of the file at path with header and
// value, in place.
func overwrite(path string, header, value []byte, fsync bool) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	err = writeBoth(fd, header, value)
	if err == nil {
		err = unix.Ftruncate(fd, int64(len(header)+len(value)))
	}
	if err == nil && fsync {
		err = unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// openExisting returns the key's file, kept open, or nil when it does not
// exist yet.
func (c *client) openExisting(key string) *os.File {
	if f := c.open[key]; f != nil {
		return f
	}
	f, err := os.OpenFile(c.path(key), os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	if c.open == nil {
		c.open = map[string]*os.File{}
	}
	if len(c.open) >= maxOpen {
		for k := range c.open {
			c.forget(k)
			break
		}
	}
	c.open[key] = f
	return f
}

func (c *client) forget(key string) {
	if f := c.open[key]; f != nil {
		_ = f.Close()
		delete(c.open, key)
	}
}

func (c *client) delete(key string) error {
	delete(c.doomed, key)
	return c.remove(key)
}

func (c *client) remove(key string) error {
	c.forget(key)
	path := c.path(key)
	if c.keepSpare(path) {
		return nil
	}
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// writeFile replaces path with header and value through a temporary file
// and a rename, on the file descriptor (as readFile reads). A full disk is
// storage.ErrStorageFull, which the queue reports as such.
func writeFile(path string, header, value []byte, fsync bool) error {
	tmp := path + "#" // escape never leaves a '#' in a key's file name
	fd, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "open", Path: tmp, Err: err}
	}
	err = writeBoth(fd, header, value)
	if err == nil && fsync {
		err = unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Rename(tmp, path)
	}
	if err != nil {
		_ = unix.Unlink(tmp)
		err = &fs.PathError{Op: "write", Path: path, Err: err}
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			return errors.Join(storage.ErrStorageFull, err)
		}
	}
	return err
}

// writeBoth writes a and then b to fd, in one system call when it can:
// copying a request of up to a megabyte behind its header cost more CPU
// than the write.
func writeBoth(fd int, a, b []byte) error {
	bufs := [][]byte{a, b}
	for len(bufs) > 0 {
		n, err := unix.Writev(fd, bufs)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		for len(bufs) > 0 && n >= len(bufs[0]) {
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
		if len(bufs) > 0 {
			bufs[0] = bufs[0][n:]
		}
	}
	return nil
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
