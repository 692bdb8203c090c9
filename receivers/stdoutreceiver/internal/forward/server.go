// Package forward is the stdout receiver's Fluent Forward transport: a server
// for what docker's fluentd log driver and ECS FireLens send (and what any
// fluent-logger library or a Fluent Bit forward output sends).
//
// It accepts the four modes of the Forward protocol v1 (Message, Forward,
// PackedForward, CompressedPackedForward with gzip), integer, float and
// EventTime timestamps, the v1.5 [time, metadata] entry form, and nil
// heartbeats on the stream (the UDP heartbeat is not served: docker and
// Fluent Bit do not need it). Handshakes (shared_key) and TLS are not
// supported.
//
// Each record becomes one stream.Line: its "log" field (str or bin), or
// "message" when there is no "log", with "source" as the stream. A line
// over the limit keeps its first maxLine bytes and, through
// stream.Skimmer, the structure of the rest (as on stdin). Records
// with neither are skipped and counted. container_name, container_id and
// the frame's tag become the batch attributes container_name, container_id
// and fluent.tag; any other string field of at most 4 KiB (docker's
// labels/env extras, or the ecs_* fields an upstream Fluent Bit added) is
// kept as an attribute of the same name, up to 16 per record. Other values
// (numbers, maps) are ignored: the line is the app's output, the record is
// only its envelope.
//
// A connection remembers the shapes of the last records it read (up to 8,
// of at most 1 KiB of fields each: template.go): a record whose bytes but
// for its line are those of one of them is read as that record was, its
// line copied and its fields not read again, as nearly every record of a
// FireLens or docker stream is.
//
// Records go to the Sink in batches, cut when the client has sent nothing
// more: at once when an ack is owed or the client batches itself, after
// a pause until the next tick of holdBatch for more frames when it sends a
// record per Message-mode frame (docker's driver writes one frame per
// line) or Forward-mode frames more often than a tick; while such a client
// keeps sending, its connection reads once a tick.
// When a frame carries the "chunk" option, {"ack": chunk} is written only
// after the Sink accepted every record of that frame. Records are not
// deduplicated: a client that resends an unacknowledged chunk after a
// connection broke mid-frame may deliver some records twice (at least once).
// The pieces of a docker partial message are acknowledged as they arrive
// (the client waits for each ack before it sends the next piece) and joined
// in memory; the joined line is delivered when its last piece arrives or the
// connection ends.
package forward

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/tick"
)

const (
	// minArenaBytes is a connection's line buffer with the default limit:
	// a batch of ~850 typical 300-byte lines.
	minArenaBytes = 256 << 10
	// shutdownDrain is how long Shutdown keeps reading what clients already
	// sent before it closes their connections.
	shutdownDrain = 200 * time.Millisecond
	// warnEvery rate-limits warnings about bad clients.
	warnEvery = 5 * time.Second
)

// Settings are what the receiver passes to the transport.
type Settings struct {
	Logger       *zap.Logger
	MaxLineBytes int
}

// Stats counts what the server saw, for self-metrics and tests.
type Stats struct {
	Records        int64 // lines the Sink accepted
	BadRecords     int64 // records skipped inside valid frames
	BadFrames      int64 // connections closed for a malformed frame
	TruncatedLines int64 // lines cut at MaxLineBytes
}

// Server accepts Fluent Forward connections on TCP and/or a unix socket,
// one goroutine per connection.
type Server struct {
	cfg     Config
	logger  *zap.Logger
	sink    stream.Sink
	maxLine int
	// arenas are the connections' line buffers, taken while a client
	// sends: room for a whole line, and for large batches of short ones.
	arenas bufferPool
	// readBufs are the read buffers of connections whose clients are
	// ahead of them (streamReadSize).
	readBufs bufferPool

	sinkCtx    context.Context
	cancelSink context.CancelFunc
	// pause is a connection's wait for more frames (holdBatch), now the
	// clock that tells whether frames come more often than that; tests
	// replace them.
	pause func()
	now   func() time.Time

	mu        sync.Mutex
	listeners []net.Listener
	conns     map[net.Conn]struct{}
	closing   bool
	wg        sync.WaitGroup

	records, badRecords, badFrames, truncated atomic.Int64
	nextWarn                                  atomic.Int64 // unix nanos
}

// New checks cfg and returns a server that is not yet listening.
func New(cfg Config, set Settings, sink stream.Sink) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sink == nil {
		return nil, errors.New("forward: nil sink")
	}
	s := &Server{cfg: cfg, logger: set.Logger, sink: sink, maxLine: set.MaxLineBytes,
		conns: make(map[net.Conn]struct{}), pause: func() { tick.Sleep(nextTick(time.Now())) }, now: time.Now}
	if s.logger == nil {
		s.logger = zap.NewNop()
	}
	if s.maxLine <= 0 {
		s.maxLine = stream.DefaultMaxLineBytes
	}
	s.initPools()
	s.sinkCtx, s.cancelSink = context.WithCancel(context.Background())
	return s, nil
}

func (s *Server) initPools() {
	s.arenas = bufferPool{size: arenaSize(s.maxLine), maxIdle: maxIdleArenas}
	s.readBufs = bufferPool{size: streamReadSize, maxIdle: maxIdleReadBufs}
}

// Start binds the listeners (an error if one cannot be bound) and serves in
// the background.
func (s *Server) Start(context.Context) error {
	var lns []net.Listener
	if s.cfg.Endpoint != "" {
		ln, err := net.Listen("tcp", s.cfg.Endpoint)
		if err != nil {
			return fmt.Errorf("forward: %w", err)
		}
		lns = append(lns, ln)
	}
	if s.cfg.UnixSocket != "" {
		ln, err := listenUnix(s.cfg.UnixSocket, s.cfg.UnixSocketMode)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return fmt.Errorf("forward: %w", err)
		}
		lns = append(lns, ln)
	}
	s.mu.Lock()
	s.listeners = lns
	s.mu.Unlock()
	for _, ln := range lns {
		s.logger.Info("Fluent Forward listening", zap.String("address", ln.Addr().Network()+":"+ln.Addr().String()))
		s.wg.Add(1)
		go s.accept(ln)
	}
	return nil
}

// Addrs returns the bound addresses (useful with port 0).
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	addrs := make([]net.Addr, len(s.listeners))
	for i, ln := range s.listeners {
		addrs[i] = ln.Addr()
	}
	return addrs
}

// listenUnix creates the socket's directory if needed, replaces a stale
// socket left by a previous run (but not a live one, nor a file that is not
// a socket) and sets the socket's permission bits to mode.
func listenUnix(path string, mode SocketMode) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s is in use by another process", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if mode == 0 {
		mode = DefaultSocketMode
	}
	if err := os.Chmod(path, os.FileMode(mode)); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil // closing it removes the socket file
}

func (s *Server) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.warn("Fluent Forward accept failed", zap.Error(err)) // e.g. out of file descriptors
			time.Sleep(50 * time.Millisecond)
			continue
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(nc, ln.Addr().Network()+":"+peerName(nc))
	}
}

func peerName(nc net.Conn) string {
	if a := nc.RemoteAddr(); a != nil && a.String() != "" {
		return a.String()
	}
	return nc.LocalAddr().String()
}

func (s *Server) serve(nc net.Conn, peer string) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
		nc.Close()
	}()
	err := newConn(s, nc, nc).serve()
	switch {
	case err == nil:
	case errors.Is(err, errBadFrame) && !s.isClosing():
		s.badFrames.Add(1)
		s.warn("Closed a Fluent Forward connection after a malformed frame",
			zap.String("peer", peer), zap.Error(err), zap.Int64("bad_frames_total", s.badFrames.Load()))
	default: // shutdown, deadline, or the client went away
		s.logger.Debug("Fluent Forward connection ended", zap.String("peer", peer), zap.Error(err))
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// warn logs at warn level at most once per warnEvery, otherwise at debug.
func (s *Server) warn(msg string, fields ...zap.Field) {
	now := time.Now().UnixNano()
	next := s.nextWarn.Load()
	if now >= next && s.nextWarn.CompareAndSwap(next, now+int64(warnEvery)) {
		s.logger.Warn(msg, fields...)
		return
	}
	s.logger.Debug(msg, fields...)
}

// Shutdown stops accepting, lets connections read for up to shutdownDrain
// what their clients already sent (delivering and acknowledging it), then
// closes them. When ctx ends first, pending Sink calls are cancelled: that
// data is not acknowledged.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	deadline := time.Now().Add(shutdownDrain)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	for nc := range s.conns {
		_ = nc.SetReadDeadline(deadline)
	}
	lns := s.listeners
	s.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		s.cancelSink()
		s.mu.Lock()
		for nc := range s.conns {
			nc.Close()
		}
		s.mu.Unlock()
		<-done
	}
	s.cancelSink()
	return err
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Records:        s.records.Load(),
		BadRecords:     s.badRecords.Load(),
		BadFrames:      s.badFrames.Load(),
		TruncatedLines: s.truncated.Load(),
	}
}

func (s *Server) countRecords(n int) { s.records.Add(int64(n)) }
func (s *Server) countBadRecord()    { s.badRecords.Add(1) }
func (s *Server) countTruncated()    { s.truncated.Add(1) }
