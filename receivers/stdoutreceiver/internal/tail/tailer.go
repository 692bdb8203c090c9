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
//
// Files, as Fluent Bit's in_tail splits them: tailer.go is the component and
// its run loop, scan.go finds the files to follow, file.go follows one file,
// reader.go cuts a file's bytes into lines, parse.go reads CRI and docker
// json-file lines, checkpoint.go keeps the offsets.
package tail

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// checkpointInterval bounds how often offsets are written while running
// for changes other than delivered batches (new files, truncation), which
// are written at once (see commit); Shutdown always writes them.
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
	t := &Tailer{
		cfg:  cfg,
		set:  set,
		sink: sink,
		rd:   newReader(set.MaxLineBytes),
		byID: map[fileID]*file{},
		done: make(chan struct{}),
	}
	t.rd.committed = t.commit
	return t, nil
}

// commit writes the offsets as soon as a batch is in the pipeline (on disk,
// with the persistent queue), so that after a kill -9 a restart reads again
// at most the batch that was being handed over: those are the lines that
// may arrive twice. A batch is up to 1,000 lines or 1 MiB, and the offsets
// are one small value written in place (dir_storage), so this costs one
// write per batch. A failed write is retried by the run loop, which logs.
func (t *Tailer) commit(ctx context.Context) {
	if t.set.Storage == nil {
		return
	}
	if err := t.saveCheckpoint(ctx); err != nil {
		t.dirty = true
		return
	}
	t.lastSave = time.Now()
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

func zapErr(err error) zap.Field {
	if err == nil {
		return zap.Skip()
	}
	return zap.Error(err)
}
