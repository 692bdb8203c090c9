package forward

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"time"

	"github.com/tinylib/msgp/msgp"
	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// Entries reads runs of [time, record] entries held in memory, outside any
// connection: what a PackedForward frame's payload holds, and what Fluent
// Bit hands an output plugin as a chunk (cmd/fluent-bit-axiom). The records
// become the same lines, attributes and batches a connection makes of them
// (fluent.tag from the tag given). Docker partial messages are joined within
// one run only: a message still incomplete at its end is delivered as it is,
// marked truncated, so that nothing of an accepted run stays behind. An
// Entries is not safe for concurrent use.
type Entries struct {
	s *Server
	c *conn
	// src is read directly, not through a source: a run is in memory, so
	// its batches are cut only by size and attributes, never by waiting.
	src bytes.Reader
}

// NewEntries returns a reader whose records go to sink.
func NewEntries(set Settings, sink stream.Sink) *Entries {
	s := &Server{logger: set.Logger, sink: sink, maxLine: set.MaxLineBytes, sinkCtx: context.Background(), now: time.Now}
	if s.logger == nil {
		s.logger = zap.NewNop()
	}
	if s.maxLine <= 0 {
		s.maxLine = stream.DefaultMaxLineBytes
	}
	s.initPools()
	e := &Entries{s: s}
	e.c = &conn{s: s, w: io.Discard, maxLine: s.maxLine}
	e.c.r = msgp.NewReaderSize(&e.src, readBufferSize)
	e.c.r.SetMaxRecursionDepth(maxDepth)
	return e
}

// Read hands the records of entries to the sink. A malformed entry ends the
// run with an error wrapping errBadFrame, after the records before it were
// delivered; an entry that is well-formed msgpack but not a record is
// skipped and counted in Stats.BadRecords.
func (e *Entries) Read(tag string, entries []byte) error {
	e.src.Reset(entries)
	c := e.c
	c.r.Reset(&e.src)
	c.tag = tag
	var err error
	for {
		if _, err = c.readShapedEntries(c.r, math.MaxUint32); err != nil {
			break
		}
		if _, err = c.r.R.PeekByte(); err != nil {
			break
		}
		if err = c.readEntryArray(c.r); err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if ferr := c.finish(); ferr != nil && err == nil {
		err = ferr
	}
	c.arena = c.arena[:0]
	c.releaseArena()
	return err
}

// Stats returns the counters of every run read so far.
func (e *Entries) Stats() Stats { return e.s.Stats() }
