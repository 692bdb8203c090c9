// Package stdin is the stdout receiver's stdin transport (`app | sidecar`):
// it cuts the process's stdin into lines and hands them to a stream.Sink,
// and, at end of input, can end the sidecar the way `kill -TERM` does
// (EndProcess) so that a shell pipeline finishes once everything shipped.
package stdin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/internal/stdinpipe"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/whenfull"
)

const (
	// A read of stdin asks for the rest of the batch and readSlack more,
	// so that a pipe holding a batch is read at once: pino lines at max
	// rate took four reads of 256 KiB per 1 MiB batch, each waking the
	// app's blocked writer, and the input read past the batch, which moves
	// to the front of the next, is at most readSlack (bench/COMPARISON.md,
	// issue 14).
	readSlack = 64 << 10
	// Batches are cut at these sizes, or when the input has had nothing
	// more for joinWindow since the batch's first line. For pino lines
	// (~330 bytes) the bytes decide: each batch costs a request on disk,
	// and at 2,048 lines a max-rate run with the disk buffer cost 2-15%
	// more CPU per line. The line cap bounds the records of short lines.
	batchLines = 4096
	batchBytes = 1 << 20
	// joinWindow is how long the lines of the app's writes may wait for
	// more (stream.JoinWindow). A pipeline call with the disk buffer is a
	// file written, renamed, read back and deleted: delivered as each read
	// returned them, pino lines at 20k/s cost 2.9 times the CPU per line of
	// the memory queue. A large pipe is not read during the window but
	// once at its end (tickReader), with the app's writes waiting in the
	// pipe's buffer meanwhile (at most a quarter of it: then the pipe is
	// read at once); other sources keep being read, so the
	// window only waits for input that is not there. A source whose reads
	// cannot wait with a deadline (a terminal, a regular file, another
	// io.Reader) delivers each read at once.
	joinWindow = stream.JoinWindow
	// A batch holding a line this long goes as soon as the lines already
	// read are in it, without the join window: such a line is a batch's
	// worth by itself (an OTLP/JSON span request from the JS client's
	// stdout exporter is ~280 KB for its 512-span exports), so waiting
	// saves no pipeline call worth having, and the window's timer woke the
	// process a second time for every such line (bench/COMPARISON.md,
	// issue 14: a third of spans-stdout's wake-ups).
	wholeLine = 64 << 10
)

// Config is the YAML under receivers.stdout.stdin.
type Config struct {
	// ExitOnEOF ends the sidecar (exit code 0, after the pipeline drained)
	// when stdin reaches end of input, so a shell pipeline ends cleanly.
	ExitOnEOF bool `mapstructure:"exit_on_eof"`
	// WhenFull is what happens while the pipeline refuses lines: by
	// default the oldest waiting lines are dropped (and counted), so that
	// the app's writes never block.
	WhenFull whenfull.Policy `mapstructure:"when_full"`
}

// NewDefaultConfig returns the defaults: exit at end of input, drop the
// oldest lines rather than block the app.
func NewDefaultConfig() Config { return Config{ExitOnEOF: true, WhenFull: whenfull.DropOldest} }

// Settings are what the receiver passes down besides the Config.
type Settings struct {
	Logger       *zap.Logger
	MaxLineBytes int
	// AtEOF runs after the last line was delivered; nil keeps running.
	AtEOF func()
}

// Transport reads lines from the process's stdin (`app | sidecar`).
// While the Sink blocks (the pipeline refuses data) nothing is read, the
// pipe fills up and the app's writes block: backpressure, not loss.
type Transport struct {
	src        io.Reader
	readBuffer int // the size of every read when set; tests set it to split lines across reads
	// deadlines is src when its reads can wait with a deadline (set by
	// Start; see windowed), else nil.
	deadlines deadlineReader
	window    time.Duration // joinWindow; tests make it long
	maxLine   int
	sink      stream.Sink
	log       *zap.Logger
	atEOF     func()

	// stopping asks a batch waiting in the join window to go now, and
	// holding is set while lines wait there: Shutdown waits for them, as
	// they were read from the app and nothing else would deliver them.
	stopping atomic.Bool
	holding  atomic.Bool

	ctx    context.Context
	cancel context.CancelFunc
	// mu is held while a batch is delivered, so that after shutdown took
	// it no batch is in flight or will start. The reading goroutine itself
	// may stay blocked in a read of stdin, which cannot be interrupted.
	mu      sync.Mutex
	stopped bool

	// arena holds the batch's lines (each with its newline, unless cut at
	// the limit) and the line being read; input is read into its free
	// capacity, where unread is what next has not returned yet, and
	// readErr the error of the read that returned it.
	arena   []byte
	unread  []byte
	readErr error
	// noNewline is set when takeLines found no newline in unread: next
	// then returns it whole without looking again (a line longer than
	// what is left of a read, such as an OTLP/JSON span line, was
	// otherwise searched twice).
	noNewline bool
	skim      stream.Skimmer
	ranges    []lineRange
	lines     []stream.Line
	// whole is set when the batch holds a line of wholeLine bytes or more.
	whole bool
	// lineBytes is the last batch's bytes per line (readSize).
	lineBytes int
}

// lineRange is where one line of the batch lies in the arena.
type lineRange struct {
	start, end int
	truncated  bool
}

// New prepares a Transport reading src; nothing is read until Start.
func New(src io.Reader, set Settings, sink stream.Sink) *Transport {
	if set.Logger == nil {
		set.Logger = zap.NewNop()
	}
	if set.MaxLineBytes <= 0 {
		set.MaxLineBytes = stream.DefaultMaxLineBytes
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Transport{src: src, window: joinWindow, maxLine: set.MaxLineBytes, sink: sink,
		log: set.Logger, atEOF: set.AtEOF, ctx: ctx, cancel: cancel}
}

// Start reads src in the background until end of input or Shutdown.
func (s *Transport) Start() {
	stdinpipe.Grow(s.src)
	if d := windowed(s.src); d != nil {
		s.src, s.deadlines = d, d
	}
	go func() {
		n, err := s.run()
		switch {
		case errors.Is(err, context.Canceled) || errors.Is(err, stream.ErrStopped):
			return
		case err != nil:
			s.log.Error("reading stdin failed; stopped reading it", zap.Int64("lines", n), zap.Error(err))
		default:
			s.log.Info("stdin reached end of input; every line was handed to the pipeline", zap.Int64("lines", n))
		}
		if s.atEOF != nil {
			s.atEOF()
		}
	}()
}

// Shutdown delivers the lines waiting in the join window, waits for the
// batch in flight, if any, and stops delivering.
func (s *Transport) Shutdown() {
	s.stopping.Store(true)
	if s.deadlines != nil {
		_ = s.deadlines.SetReadDeadline(time.Now()) // wakes a reader waiting in the join window
	}
	// The bound covers a reader stuck elsewhere (the rest of a line that
	// never comes), whose lines are then lost as those in the pipe are.
	for give := time.Now().Add(s.window + time.Second); s.holding.Load() && time.Now().Before(give); {
		time.Sleep(time.Millisecond)
	}
	s.cancel()
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// run reads until end of input (nil error) or a failure, and returns the
// number of lines delivered.
func (s *Transport) run() (int64, error) {
	var delivered int64
	lineStart, inLine, truncated := 0, false, false
	var batchStart time.Time // when the batch's first line was read
	for {
		if s.deadlines != nil && len(s.unread) == 0 && s.readErr == nil {
			// The next read waits for the source: for no longer than the
			// held batch's join window, or not at all once stopping.
			var until time.Time
			if s.stopping.Load() {
				until = time.Now()
			} else if len(s.ranges) > 0 && !inLine {
				until = batchStart.Add(s.window)
			}
			if err := s.deadlines.SetReadDeadline(until); err != nil {
				return delivered, err
			}
		}
		frag, err := s.next()
		timedOut := err != nil && errors.Is(err, os.ErrDeadlineExceeded)
		if timedOut {
			err = nil // frag, if any, is the start of a line
		}
		complete := len(frag) > 0 && frag[len(frag)-1] == '\n'
		body := frag
		if complete {
			body = frag[:len(frag)-1]
		}
		if len(frag) > 0 {
			if !inLine {
				lineStart, inLine, truncated = len(s.arena), true, false
			}
			// Past the limit the line goes through the skimmer, which
			// keeps its structure in bounded memory.
			if room := s.maxLine - (len(s.arena) - lineStart); !truncated && len(body) > room {
				s.arena = extend(s.arena, body[:room])
				s.arena = s.arena[:lineStart+s.skim.Start(s.arena[lineStart:])]
				body, truncated = body[room:], true
			}
			if truncated {
				// In place: the skimmer keeps some of the bytes it reads,
				// in order, so it never writes past the one it reads.
				s.arena = s.skim.Overflow(s.arena, body)
			} else {
				// With its newline, so that the next line read in place
				// follows it: the line's range leaves the newline out.
				s.arena = extend(s.arena, frag)
			}
		}
		// At end of input a last line without a newline still counts.
		final := err != nil
		if complete || (final && inLine) {
			if len(s.ranges) == 0 {
				batchStart = time.Now()
				s.holding.Store(true)
			}
			end := len(s.arena)
			if complete && !truncated {
				end--
			}
			s.ranges = append(s.ranges, lineRange{start: lineStart, end: end, truncated: truncated})
			s.whole = s.whole || end-lineStart >= wholeLine
			inLine = false
			if complete {
				s.takeLines()
			}
		}
		if timedOut && (!inLine || s.stopping.Load()) {
			// The join window passed without more input, or Shutdown
			// wants the held lines (a line begun is then lost, as the
			// rest of the pipe is).
			n, ferr := s.flush()
			delivered += n
			if ferr != nil {
				return delivered, ferr
			}
			if s.stopping.Load() {
				return delivered, stream.ErrStopped
			}
			continue
		}
		if final {
			n, ferr := s.flush()
			delivered += n
			if ferr != nil {
				return delivered, ferr
			}
			if errors.Is(err, io.EOF) {
				return delivered, nil
			}
			return delivered, err
		}
		if inLine {
			continue
		}
		full := len(s.ranges) >= batchLines || len(s.arena) >= batchBytes
		if full || (len(s.unread) == 0 && (s.deadlines == nil || s.whole)) {
			n, ferr := s.flush()
			delivered += n
			if ferr != nil {
				return delivered, ferr
			}
			if len(s.arena) == 0 {
				// The input read past the batch moves to the front: the
				// next batch is then read in place from its start.
				s.unread = s.arena[:copy(s.arena[:len(s.unread)], s.unread)]
			}
		}
	}
}

// takeLines takes the lines that lie whole in the input read, up to a full
// batch, in one loop: what run does for each, with nothing else to check
// (they are complete, within the limit and read in place). (The slices
// kept in locals instead cost more: Go reloads them all after each
// IndexByte call.)
func (s *Transport) takeLines() {
	for len(s.ranges) < batchLines && len(s.arena) < batchBytes {
		i := bytes.IndexByte(s.unread, '\n')
		if i < 0 || i > s.maxLine {
			s.noNewline = i < 0
			return
		}
		start := len(s.arena)
		s.arena = extend(s.arena, s.unread[:i+1])
		s.unread = s.unread[i+1:]
		s.ranges = append(s.ranges, lineRange{start: start, end: start + i})
		s.whole = s.whole || i >= wholeLine
	}
}

// next returns the next piece of input: a line with its newline, the rest
// of the last read (the start of a line whose end is still to be read), or,
// once the input read is used up, nothing and the read's error. Input is
// read into the arena's free capacity, right after the arena, so that the
// lines of a batch are read in place rather than copied there (extend).
func (s *Transport) next() ([]byte, error) {
	for empty := 0; len(s.unread) == 0; empty++ {
		if err := s.readErr; err != nil {
			s.readErr = nil
			return nil, err
		}
		if empty == maxEmptyReads {
			return nil, io.ErrNoProgress
		}
		size := s.readSize()
		if cap(s.arena)-len(s.arena) < size {
			grown := make([]byte, len(s.arena), len(s.arena)+len(s.arena)/2+size)
			copy(grown, s.arena)
			s.arena = grown
		}
		free := s.arena[len(s.arena) : len(s.arena)+size]
		n, err := s.src.Read(free)
		s.unread, s.readErr, s.noNewline = free[:n], err, false
	}
	piece := s.unread
	if s.noNewline {
		s.noNewline = false
	} else if i := bytes.IndexByte(piece, '\n'); i >= 0 {
		piece = piece[:i+1]
	}
	s.unread = s.unread[len(piece):]
	return piece, nil
}

// readSize is how much the next read asks for: readBuffer when set, else
// what is left to fill the batch, by its bytes or, at the length of its
// lines so far (of the last batch's before the first), its lines, and
// readSlack more; only readSlack before any line was seen.
func (s *Transport) readSize() int {
	if s.readBuffer > 0 {
		return s.readBuffer
	}
	perLine := s.lineBytes
	if n := len(s.ranges); n > 0 {
		perLine = len(s.arena) / n
	}
	rest := min(batchBytes-len(s.arena), (batchLines-len(s.ranges))*perLine)
	return max(rest, 0) + readSlack
}

// maxEmptyReads is how many reads in a row may return nothing before the
// source counts as broken (as bufio.Reader does).
const maxEmptyReads = 100

// extend appends b to arena; b may lie in arena's free capacity right
// after it, where next reads input, and is then not copied.
func extend(arena, b []byte) []byte {
	if len(b) > 0 && len(arena) < cap(arena) && &arena[:len(arena)+1][len(arena)] == &b[0] {
		return arena[:len(arena)+len(b)]
	}
	return append(arena, b...)
}

// deadlineReader is a source whose reads can wait with a deadline.
type deadlineReader interface {
	io.Reader
	SetReadDeadline(time.Time) error
}

// windowed returns src as a deadlineReader when its reads can wait with a
// deadline, which lets the lines of several writes join one batch (see
// joinWindow): a pipe or socket Go's poller serves, or a pollable copy of
// a blocking stdin pipe, read on a tick when it is a large pipe on Linux
// (see tickReader); else nil.
func windowed(src io.Reader) deadlineReader {
	if f, ok := src.(*os.File); ok {
		return windowedFile(f)
	}
	if d, ok := src.(deadlineReader); ok && d.SetReadDeadline(time.Time{}) == nil {
		return d
	}
	return nil
}

// flush hands the complete lines read so far to the sink.
func (s *Transport) flush() (int64, error) {
	if len(s.ranges) == 0 {
		return 0, nil
	}
	// Only Data and Truncated are set: the lines' other fields stay zero
	// from one batch to the next (this transport has no times or
	// streams), and writing whole Lines cost three times as much.
	if cap(s.lines) < len(s.ranges) {
		s.lines = make([]stream.Line, len(s.ranges), cap(s.ranges))
	}
	lines := s.lines[:len(s.ranges)]
	for i, lr := range s.ranges {
		lines[i].Data, lines[i].Truncated = s.arena[lr.start:lr.end], lr.truncated
	}
	s.lines = lines
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.holding.Store(false)
	if s.stopped {
		return 0, stream.ErrStopped
	}
	if err := s.sink(s.ctx, stream.Batch{Lines: s.lines, OneLine: true}); err != nil {
		return 0, err
	}
	n := int64(len(s.ranges))
	s.lineBytes = len(s.arena) / len(s.ranges)
	s.arena, s.ranges, s.whole = s.arena[:0], s.ranges[:0], false
	return n, nil
}
