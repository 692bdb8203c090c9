package tail

// One followed file: its identity (device and inode), opening it at its
// start position, and reading it from its offset after checking for
// truncation; reader.go turns its bytes into lines.

import (
	"context"
	"os"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

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
		attrs:  []stream.Attr{{Key: stream.AttrFilePath, Value: path}},
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
