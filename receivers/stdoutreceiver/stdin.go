package stdoutreceiver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// Batches are cut when the input has nothing more buffered (so a slow app's
// line goes out at once, with no timer) or at these sizes.
const (
	stdinPipeBuffer    = 1 << 20
	stdinReadBuffer    = 256 << 10
	stdinBatchLines    = 2048
	stdinBatchBytes    = 1 << 20
	shutdownSignalTick = 200 * time.Millisecond
)

// stdinTransport reads lines from the process's stdin (`app | sidecar`).
// While the Sink blocks (the pipeline refuses data) nothing is read, the
// pipe fills up and the app's writes block: backpressure, not loss.
type stdinTransport struct {
	src        io.Reader
	readBuffer int // bufio size; tests make it small to split lines across reads
	maxLine    int
	sink       stream.Sink
	log        *zap.Logger
	// atEOF runs after the last line was delivered; nil keeps running.
	atEOF func()

	ctx    context.Context
	cancel context.CancelFunc
	// mu is held while a batch is delivered, so that after shutdown took
	// it no batch is in flight or will start. The reading goroutine itself
	// may stay blocked in a read of stdin, which cannot be interrupted.
	mu      sync.Mutex
	stopped bool

	arena []byte // the bytes of the batch's lines
	spans []lineSpan
	lines []stream.Line
}

type lineSpan struct {
	start, end int
	truncated  bool
}

func newStdinTransport(src io.Reader, maxLine int, sink stream.Sink, log *zap.Logger) *stdinTransport {
	ctx, cancel := context.WithCancel(context.Background())
	return &stdinTransport{src: src, readBuffer: stdinReadBuffer, maxLine: maxLine, sink: sink, log: log, ctx: ctx, cancel: cancel}
}

func (s *stdinTransport) start() {
	growPipe(s.src)
	go func() {
		n, err := s.run()
		switch {
		case errors.Is(err, context.Canceled) || errors.Is(err, errStopped):
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

func (s *stdinTransport) shutdown() {
	s.cancel()
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// run reads until end of input (nil error) or a failure, and returns the
// number of lines delivered.
func (s *stdinTransport) run() (int64, error) {
	br := bufio.NewReaderSize(s.src, s.readBuffer)
	var delivered int64
	lineStart, inLine, truncated := 0, false, false
	for {
		frag, err := br.ReadSlice('\n')
		complete := len(frag) > 0 && frag[len(frag)-1] == '\n'
		if complete {
			frag = frag[:len(frag)-1]
		}
		if len(frag) > 0 || complete {
			if !inLine {
				lineStart, inLine, truncated = len(s.arena), true, false
			}
			room := s.maxLine - (len(s.arena) - lineStart)
			if len(frag) > room {
				frag, truncated = frag[:room], true
			}
			s.arena = append(s.arena, frag...)
		}
		// At end of input a last line without a newline still counts.
		final := err != nil && !errors.Is(err, bufio.ErrBufferFull)
		if complete || (final && inLine) {
			s.spans = append(s.spans, lineSpan{start: lineStart, end: len(s.arena), truncated: truncated})
			inLine = false
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
		if !inLine && (br.Buffered() == 0 || len(s.spans) >= stdinBatchLines || len(s.arena) >= stdinBatchBytes) {
			n, ferr := s.flush()
			delivered += n
			if ferr != nil {
				return delivered, ferr
			}
		}
	}
}

// flush hands the complete lines read so far to the sink.
func (s *stdinTransport) flush() (int64, error) {
	if len(s.spans) == 0 {
		return 0, nil
	}
	s.lines = s.lines[:0]
	for _, sp := range s.spans {
		s.lines = append(s.lines, stream.Line{Data: s.arena[sp.start:sp.end], Truncated: sp.truncated})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return 0, errStopped
	}
	if err := s.sink(s.ctx, stream.Batch{Lines: s.lines}); err != nil {
		return 0, err
	}
	n := int64(len(s.spans))
	s.arena, s.spans = s.arena[:0], s.spans[:0]
	return n, nil
}

// shutdownProcess ends the sidecar the way `kill -TERM` does, so the
// collector shuts down gracefully: receivers stop, exporters flush their
// queues, and the process exits 0. The collector only listens for SIGTERM
// once every component has started, so until the receiver's Shutdown
// closes stop the signal is repeated, and this function holds its own
// signal subscription meanwhile so that an early SIGTERM cannot kill the
// process by the default action.
func shutdownProcess(stop <-chan struct{}) {
	held := make(chan os.Signal, 1)
	signal.Notify(held, syscall.SIGTERM)
	defer signal.Stop(held)
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		return // cannot happen on Unix: FindProcess always succeeds there
	}
	tick := time.NewTicker(shutdownSignalTick)
	defer tick.Stop()
	for {
		_ = self.Signal(syscall.SIGTERM)
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}
