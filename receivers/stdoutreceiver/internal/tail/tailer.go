// Package tail follows container log files (CRI, docker json-file, raw)
// through kubelet's and logrotate's rotations and hands their lines to a
// stream.Sink, checkpointing offsets in a storage.Client so that a restart
// neither loses nor repeats lines.
//
// One goroutine does all the work: each round it reads every followed file
// from its committed offset to the end (or a per-round budget), in batches,
// and waits on the Sink for each batch. A blocked Sink therefore pauses the
// reading: nothing is buffered beyond one batch.
//
// Rotation:
//   - rename + new file (kubelet, logrotate's default): files are followed by
//     device and inode, so the renamed file keeps being read; once no glob
//     matches it any more and it has not grown for a whole poll interval, its
//     last bytes are delivered and it is closed. The new file at the old path
//     is a new inode and is read from its start.
//   - copytruncate: a file that got shorter than its offset, or whose first
//     bytes changed, is read again from 0. Lines written between the copy and
//     the truncate are lost, as with every shipper; prefer rename rotation.
//     Do not let include match the copies (e.g. *.log.1), or they are
//     shipped a second time.
//
// Files are found by polling (poll_interval): a file that is created and
// rotated away between two polls is never seen, which kubelet (at most one
// rotation per 10 s) and logrotate do not do. Files rotated while the sidecar
// was down are found again beside their checkpointed path and finished.
//
// CRI writes both streams to one file; pieces (P) of a stdout line are
// joined until its F, and a piece of the other stream in between ends the
// pending line unjoined rather than mixing the streams.
//
// Start position: a file found on the first poll that the checkpoint does
// not know starts at start_at (default end: a sidecar restarted without its
// checkpoint on a long-lived node must not re-ship days of logs). When a
// checkpoint from an earlier run exists, unknown files appeared while the
// sidecar was down and are read from the beginning, as is every file that
// appears after the first poll.
package tail

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// checkpointInterval bounds how often offsets are written while running;
// Shutdown always writes them.
const checkpointInterval = time.Second

// rotateWait is how long a rotated file must stay unchanged before it is
// let go (at least two polls pass too).
const rotateWait = time.Second

// Settings are what the receiver passes down besides the Config.
type Settings struct {
	Logger       *zap.Logger
	Storage      storage.Client // nil = offsets not persisted
	MaxLineBytes int
}

// Tailer follows the files matched by a Config.
type Tailer struct {
	cfg  Config
	set  Settings
	sink stream.Sink
	rd   *reader

	// Touched only by the run goroutine, and by Shutdown once it ended.
	files     []*file
	byID      map[fileID]*file
	known     []checkpointEntry // offsets of the previous run
	resumed   bool              // a checkpoint of a previous run exists
	polled    bool              // the first poll is done
	dirty     bool              // offsets changed since the last checkpoint
	lastSave  time.Time
	lastGlob  time.Time
	fullWarns int

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

type fileID struct{ dev, ino uint64 }

// file is one followed file, identified by device and inode.
type file struct {
	fileID
	path   string
	fd     *os.File
	attrs  []stream.Attr
	fp     fingerprint
	offset int64  // end of the last complete line the Sink accepted
	format string // cri, docker or raw; "" until auto detection saw a line

	resumed  bool      // the checkpoint of the previous run knew it
	seen     bool      // matched by the latest glob
	goneAt   time.Time // the first glob that no longer matched it
	atEOF    bool      // the latest round read everything there was
	readSize int64     // size and mtime when the latest round started:
	readMod  time.Time // unchanged, an idle file costs one fstat per round
	failing  bool      // the latest read failed (and was logged)
	globSize int64     // size at the latest glob, to tell a finished rotated file
}

// New validates cfg and prepares a Tailer; nothing is read until Start.
func New(cfg Config, set Settings, sink stream.Sink) (*Tailer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	def := NewDefaultConfig()
	if cfg.Format == "" {
		cfg.Format = def.Format
	}
	if cfg.StartAt == "" {
		cfg.StartAt = def.StartAt
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = def.PollInterval
	}
	if cfg.MaxOpenFiles == 0 {
		cfg.MaxOpenFiles = def.MaxOpenFiles
	}
	if set.Logger == nil {
		set.Logger = zap.NewNop()
	}
	if set.MaxLineBytes <= 0 {
		set.MaxLineBytes = stream.DefaultMaxLineBytes
	}
	if sink == nil {
		return nil, errors.New("files: nil sink")
	}
	return &Tailer{
		cfg:  cfg,
		set:  set,
		sink: sink,
		rd:   newReader(set.MaxLineBytes),
		byID: map[fileID]*file{},
		done: make(chan struct{}),
	}, nil
}

// Start loads the checkpoint and returns; files are read in the background.
func (t *Tailer) Start(ctx context.Context) error {
	if err := t.loadCheckpoint(ctx); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	go t.run(runCtx)
	return nil
}

// Shutdown stops reading, waits for the reader and checkpoints offsets.
func (t *Tailer) Shutdown(ctx context.Context) error {
	if t.cancel == nil { // never started
		return nil
	}
	var err error
	t.once.Do(func() {
		t.cancel()
		select {
		case <-t.done:
		case <-ctx.Done():
			// The reader still owns the offsets; it is stuck in a Sink that
			// ignores cancellation. Not checkpointing keeps the last saved,
			// older offsets: a restart repeats lines rather than losing them.
			err = ctx.Err()
			return
		}
		err = t.saveCheckpoint(ctx)
		for _, f := range t.files {
			_ = f.fd.Close()
		}
	})
	return err
}

func (t *Tailer) run(ctx context.Context) {
	defer close(t.done)
	wait := time.NewTimer(0)
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wait.C:
		}
		for {
			if time.Since(t.lastGlob) >= t.cfg.PollInterval {
				t.glob(ctx)
			}
			more := t.round(ctx)
			if ctx.Err() != nil {
				return
			}
			if t.dirty && time.Since(t.lastSave) >= checkpointInterval {
				if err := t.saveCheckpoint(ctx); err != nil {
					t.set.Logger.Warn("Cannot checkpoint file offsets", zap.Error(err))
				}
				t.lastSave = time.Now()
			}
			if !more {
				break
			}
		}
		wait.Reset(t.cfg.PollInterval)
	}
}

// glob finds the files to follow, opens new ones and lets go of rotated
// files that are read to their end.
func (t *Tailer) glob(ctx context.Context) {
	t.lastGlob = time.Now()
	var paths []string
	for _, pattern := range t.cfg.Include {
		m, _ := filepath.Glob(pattern) // patterns are validated
		paths = append(paths, m...)
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)

	for _, f := range t.files {
		f.seen = false
	}
	matched := make(map[fileID]string, len(paths))
	ids := make([]fileID, 0, len(paths))
	for _, path := range paths {
		if t.excluded(path) {
			continue
		}
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		id := idOf(st)
		if _, dup := matched[id]; !dup { // two globs or a symlink to the same file
			matched[id] = path
			ids = append(ids, id)
		}
	}
	if !t.polled && t.resumed {
		t.recoverRotated(matched)
	}
	skipped := 0
	for _, id := range ids {
		path := matched[id]
		if f, ok := t.byID[id]; ok {
			f.seen = true
			if f.path != path { // renamed: follow the inode, report its new name
				f.path = path
				f.attrs = []stream.Attr{{Key: "log.file.path", Value: path}}
			}
			continue
		}
		if len(t.files) >= t.cfg.MaxOpenFiles {
			skipped++
			continue
		}
		t.open(path, id)
	}
	if skipped > 0 && t.fullWarns < 10 {
		t.fullWarns++
		t.set.Logger.Warn("Not following some matched files: max_open_files reached",
			zap.Int("skipped", skipped), zap.Int("max_open_files", t.cfg.MaxOpenFiles))
	}
	t.polled = true

	// A file no glob matches any more (rotated away, deleted) is let go once
	// it is read to its end and did not grow for rotateWait: the runtime
	// may still write to it for a moment after the rename.
	kept := t.files[:0]
	for _, f := range t.files {
		size := f.size()
		switch {
		case f.seen:
			f.goneAt = time.Time{}
		case f.goneAt.IsZero():
			f.goneAt = t.lastGlob
		case f.atEOF && size == f.globSize && t.lastGlob.Sub(f.goneAt) >= rotateWait:
			if err := t.read(ctx, f, true); err == nil {
				t.closeFile(f)
				continue
			}
		}
		f.globSize = size
		kept = append(kept, f)
	}
	clear(t.files[len(kept):])
	t.files = kept
}

// recoverRotated finds the files of the previous run that were rotated
// while the sidecar was down: no glob matches them any more, but kubelet and
// logrotate leave them beside their old path. They are followed again (as
// rotated files, before the new ones) so that their last lines are not lost.
func (t *Tailer) recoverRotated(matched map[fileID]string) {
	lost := map[fileID]string{}
	for _, e := range t.known {
		id := fileID{dev: e.Dev, ino: e.Ino}
		if _, ok := matched[id]; ok {
			continue
		}
		// A symlink (/var/log/containers/*.log) now points to the new file,
		// beside the rotated one.
		path := e.Path
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
		lost[id] = filepath.Dir(path)
	}
	dirs := map[string]bool{}
	for _, dir := range lost {
		if dirs[dir] {
			continue
		}
		dirs[dir] = true
		entries, _ := os.ReadDir(dir)
		for _, de := range entries {
			info, err := de.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			id := idOf(info)
			if lost[id] == dir && t.byID[id] == nil {
				if f := t.open(filepath.Join(dir, de.Name()), id); f != nil && !f.resumed {
					t.closeFile(f) // inode reused by another file: not ours
					t.files = t.files[:len(t.files)-1]
				} else if f != nil {
					f.seen = false
				}
			}
		}
	}
}

func (t *Tailer) excluded(path string) bool {
	for _, pattern := range t.cfg.Exclude {
		if ok, _ := filepath.Match(pattern, path); ok {
			return true
		}
	}
	return false
}

// open starts following a file; nil if it cannot be read now.
func (t *Tailer) open(path string, id fileID) *file {
	fd, err := os.Open(path)
	if err != nil {
		t.set.Logger.Debug("Cannot open log file", zap.String("path", path), zap.Error(err))
		return nil
	}
	st, err := fd.Stat()
	if err != nil || idOf(st) != id { // replaced between stat and open: next poll
		_ = fd.Close()
		return nil
	}
	fp, head, err := readFingerprint(fd, st.Size(), t.rd.head)
	if err != nil {
		_ = fd.Close()
		return nil
	}
	f := &file{
		fileID: id,
		path:   path,
		fd:     fd,
		attrs:  []stream.Attr{{Key: "log.file.path", Value: path}},
		fp:     fp,
		seen:   true,
	}
	if t.cfg.Format != FormatAuto {
		f.format = t.cfg.Format
	}
	if off, ok := t.resumeOffset(id.dev, id.ino, head, st.Size()); ok {
		f.offset, f.resumed = off, true
	} else if !t.polled && !t.resumed && t.cfg.StartAt == StartAtEnd {
		f.offset = lastLineEnd(fd, st.Size(), t.rd.buf)
	}
	t.files = append(t.files, f)
	t.byID[id] = f
	t.dirty = true
	return f
}

func (t *Tailer) closeFile(f *file) {
	_ = f.fd.Close()
	delete(t.byID, f.fileID)
	t.dirty = true
}

// round reads each file once, up to a budget; more reports that some file
// had more to read than the budget allowed.
func (t *Tailer) round(ctx context.Context) (more bool) {
	for _, f := range t.files {
		if ctx.Err() != nil {
			return false
		}
		if err := t.read(ctx, f, false); err != nil {
			if !errors.Is(err, context.Canceled) && !f.failing { // once, not every round
				f.failing = true
				t.set.Logger.Warn("Cannot read log file", zap.String("path", f.path), zap.Error(err))
			}
			continue
		}
		f.failing = false
		more = more || !f.atEOF
	}
	return more
}

// read delivers f's complete lines from its offset, noticing truncation
// first. final (a rotated file being let go) also delivers a last line
// that has no newline yet.
func (t *Tailer) read(ctx context.Context, f *file, final bool) error {
	st, err := f.fd.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if f.atEOF && size == f.readSize && st.ModTime().Equal(f.readMod) && !final {
		return nil // unchanged since it was read to its end
	}
	f.readSize, f.readMod = size, st.ModTime()
	fp, head, err := readFingerprint(f.fd, size, t.rd.head)
	if err != nil {
		return err
	}
	if size < f.offset || !f.fp.matches(head) {
		// copytruncate: the content was replaced; its start is new.
		t.set.Logger.Info("Log file truncated, reading it from the start", zap.String("path", f.path))
		f.offset = 0
		t.dirty = true
	}
	f.fp = fp
	if f.format == "" {
		if f.format = detectFormat(f.fd, t.rd.buf); f.format == "" {
			f.atEOF = true // not even one complete line yet
			return nil
		}
	}
	before := f.offset
	err = t.rd.readFile(ctx, f, t.sink, final)
	if f.offset != before {
		t.dirty = true
	}
	return err
}

func (f *file) size() int64 {
	st, err := f.fd.Stat()
	if err != nil {
		return -1
	}
	return st.Size()
}

func idOf(st os.FileInfo) fileID {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(s.Dev), ino: s.Ino}
	}
	return fileID{}
}

func zapErr(err error) zap.Field {
	if err == nil {
		return zap.Skip()
	}
	return zap.Error(err)
}
