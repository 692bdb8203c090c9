package forward

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/philhofer/fwd"
	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/tick"
)

// maxBatchLines caps a batch; larger batches only delay the first ack.
const maxBatchLines = 1024

// holdBatch is the tick a connection with no ack owed pauses until for
// more frames before it delivers (stream.JoinWindow), when its last frame
// was a Message-mode frame (one record), or a Forward-mode frame that came
// less than a tick after its last batch was delivered. Docker's fluentd
// driver writes each line as its own frame: delivered as they came, every
// line cost a batch and a pipeline call (2.5x the stdin path's CPU per line
// at 20k lines/s). A client that writes a small Forward-mode frame every
// few ms cost a wake-up, a batch and a pipeline call per frame (1,200-1,600
// thread wake-ups a second at 20k lines/s in 16-line frames, twice
// docker-style's); one that sends batches seconds apart (Fluent Bit flushes
// once a second) is not paused, as a pause would only add a wake-up. While
// a paused client keeps sending (a pause brought frames, less than one read
// takes), the connection also waits for the next tick after delivering
// instead of waking for its next frame, so it reads and delivers once a
// tick. Every pause ends on the same clock (multiples of holdBatch, on
// package tick's clock), so connections wake together, and with stdin. A
// wake-up for a frame costs far more than reading it: the Go runtime's
// monitor thread wakes with the process and polls every 20 µs for a
// millisecond after (at 1,000 lines/s on 4 connections, 1,800 thread
// wake-ups and 40 ms of CPU per second with a 5 ms pause per batch,
// against 400 and 14 ms so). A client waiting for an ack is answered at
// once. The batch never outgrows the connection's
// arena: the pause bounds latency, the arena bytes.
const holdBatch = stream.JoinWindow

// nextTick is when a pause that begins at now ends.
func nextTick(now time.Time) time.Time { return tick.Next(now, holdBatch) }

// streamReadSize is the read buffer of a connection whose client is ahead
// of it (a read filled the buffer: the socket holds more), as at max rate.
// On loopback each read(2) of a TCP socket sends the client the window it
// freed, and the client's next segments go out within that read, on the
// sidecar's CPU: at FireLens-style max rate with 64 KiB reads, 50,000 reads
// in 10 s and 13% of the CPU in read(2), half of that sending; with 1 MiB,
// 7,500 reads and 7% (2.8% less CPU per line, median of 4 alternated
// runs). The connection reads through it only while its client is ahead,
// so that an idle connection holds 64 KiB.
const streamReadSize = 1 << 20

// maxIdleReadBufs bounds the stream read buffers kept for connections
// that fall behind their clients again.
const maxIdleReadBufs = 2

// holdLowat is the TCP receive mark while a connection pauses: below it,
// arriving frames do not wake the sidecar (see newRcvLowat).
const holdLowat = 64 << 10

// sinkError marks an error from the Sink (shutdown): nothing more is
// delivered or acknowledged on that connection.
type sinkError struct{ err error }

func (e sinkError) Error() string { return "pipeline refused the batch: " + e.err.Error() }
func (e sinkError) Unwrap() error { return e.err }

// conn decodes one client connection. Lines are copied into arena, a buffer
// of fixed capacity (so lines can point into it), and handed to the Sink in
// batches of consecutive records with equal attributes. A batch is delivered
// when reading on would wait for the client (see source), when it is full,
// or when the attributes change; frames that asked for an ack are
// acknowledged after the delivery that held their last record.
type conn struct {
	s       *Server
	w       io.Writer
	r       *msgp.Reader
	maxLine int

	// src is what c.r reads; c.r reads it through small, or through a
	// reader of streamBuf (from s.readBufs) while the client is ahead.
	src       *source
	small     *fwd.Reader
	streamBuf []byte

	tag  string // of the current frame
	rec  fluentRecord
	acks []string // chunks of decoded frames waiting for the next flush

	arena []byte // from s.arenas, nil while the client is idle
	lines []stream.Line
	attrs []stream.Attr // of every line in lines
	// attrsFrom is a record whose attributes are attrs, as it was read.
	attrsFrom recordFields
	// attrsGen counts the changes of attrs (setAttrs).
	attrsGen uint64
	// shapes are the records read last, by their bytes (template.go).
	shapes shapes
	// betweenFrames is set while no frame is being decoded: only then may
	// the idle connection give its arena back.
	betweenFrames bool
	// waitErr is what delivering before a wait failed with: the decoder
	// only sees a read error.
	waitErr error
	// held is set once the current batch paused for more frames.
	held bool
	// streaming is set while the client keeps sending: the last pause
	// brought frames.
	streaming bool
	// messageMode is set while the last frame read is a Message frame.
	messageMode bool
	// lastDelivery is when the last batch went to the Sink.
	lastDelivery time.Time
	// rcvLowat sets the socket's receive mark; nil when it has none.
	// lowat is the mark set last.
	rcvLowat func(n int)
	lowat    int

	partials partials
	skim     stream.Skimmer // of a record's line past maxLine

	// PackedForward payload readers, created on first use.
	packedSrc io.LimitedReader
	packed    *msgp.Reader
	gzBuf     *bufio.Reader
	gz        *gzip.Reader

	// ackMu guards writing acks: a batch waiting in a when_full buffer is
	// acknowledged from the buffer's goroutine once it is in.
	ackMu  sync.Mutex
	ackBuf []byte
}

func newConn(s *Server, r io.Reader, w io.Writer) *conn {
	c := &conn{s: s, w: w, maxLine: s.maxLine, rcvLowat: newRcvLowat(r), lowat: 1}
	src := &source{r: r, tryRead: newTryRead(r), hold: c.hold, resumed: c.resumed,
		beforeWait: c.beforeWait, beforeBlock: func() { c.setLowat(1) }, waitRead: newWaitRead(r)}
	c.r = msgp.NewReaderSize(src, readBufferSize)
	c.r.SetMaxRecursionDepth(maxDepth)
	c.src, c.small = src, c.r.R
	return c
}

// fitReadBuffer reads through a buffer of streamReadSize once the client
// is ahead of the connection (its last read filled the buffer), and
// through the small one again once the connection has caught up and
// decoded all it read. Only between frames: a frame being decoded points
// into the buffer. What the small buffer still holds is read again first,
// through the large one.
func (c *conn) fitReadBuffer() {
	switch {
	case c.streamBuf == nil && c.src.full:
		c.streamBuf = c.s.readBufs.get()
		c.src.carry, _ = c.small.Peek(c.small.Buffered())
		c.r.R = fwd.NewReaderBuf(c.src, c.streamBuf)
	case c.streamBuf != nil && !c.src.full && c.r.R.Buffered() == 0:
		c.s.readBufs.put(c.streamBuf)
		c.streamBuf = nil
		c.small.Reset(c.src)
		c.r.R = c.small
	}
}

// hold pauses until the next tick when the client has sent nothing more,
// waits for no ack, and sends one record per frame or frames more often
// than a tick (see holdBatch): once per batch, so that the frames it writes
// meanwhile join the batch, and after the batch was delivered while the
// client keeps sending, so that the connection reads once a tick.
func (c *conn) hold(delivered bool) bool {
	if len(c.acks) > 0 || !c.messageMode && !c.streaming && c.s.now().Sub(c.lastDelivery) >= holdBatch {
		return false
	}
	if delivered && !c.streaming || !delivered && (c.held || len(c.lines) == 0) {
		return false
	}
	c.held = true
	c.setLowat(holdLowat)
	c.s.pause()
	return true
}

// resumed records whether a pause brought frames (and no more than one
// read takes); if it did not after a delivery, the next batch may pause
// again.
func (c *conn) resumed(got bool) {
	c.streaming = got
	if !got && len(c.lines) == 0 {
		c.held = false
	}
}

// setLowat sets the socket's receive mark to n: holdLowat while the
// connection pauses (it stays there while the client streams, as reads
// that do not wait ignore it), 1 before it waits for its client.
func (c *conn) setLowat(n int) {
	if c.rcvLowat != nil && c.lowat != n {
		c.rcvLowat(n)
		c.lowat = n
	}
}

// beforeWait delivers what was decoded before the connection waits for its
// client, and gives the arena back when no frame is half read.
func (c *conn) beforeWait() error {
	if err := c.deliver(); err != nil {
		c.waitErr = err
		return err
	}
	if c.betweenFrames {
		c.arena = c.arena[:0]
		c.releaseArena()
	}
	return nil
}

// serve decodes frames until the client closes, sends a bad frame or the
// read fails (closed or past the shutdown deadline). What was decoded before
// that is delivered and acknowledged; after a Sink error nothing is.
func (c *conn) serve() error {
	defer func() {
		if c.streamBuf != nil { // what it holds is not read any more
			c.s.readBufs.put(c.streamBuf)
		}
	}()
	for {
		c.betweenFrames = true
		c.fitReadBuffer()
		err := c.readFrame()
		if err == nil {
			continue
		}
		if c.waitErr != nil {
			err = c.waitErr
		}
		var se sinkError
		if errors.As(err, &se) {
			return err
		}
		ferr := c.finish()
		c.releaseArena()
		if ferr != nil {
			return ferr
		}
		if err == io.EOF {
			return nil
		}
		return err
	}
}

// finish delivers pending partial lines and the last batch.
func (c *conn) finish() error {
	for p := c.partials.oldest(); p != nil; p = c.partials.oldest() {
		p.truncated = true // its last piece never came
		if err := c.emitPartial(p); err != nil {
			return err
		}
	}
	return c.flush()
}

// frameDone is called after a frame was read completely. Acks are owed
// until the next flush; a client that pipelines many frames without
// records gets them after maxBatchLines frames at the latest.
func (c *conn) frameDone(chunk string) error {
	if chunk == "" {
		return nil
	}
	c.acks = append(c.acks, chunk)
	if len(c.acks) >= maxBatchLines {
		return c.flush()
	}
	return nil
}

// handleRecord turns a decoded record, whose line is arena[rec.mark:], into
// a line of the current batch, or into a piece of a docker partial message.
func (c *conn) handleRecord(rec *fluentRecord) error {
	if !rec.hasLine {
		c.arena = c.arena[:rec.mark]
		c.s.countBadRecord()
		return nil
	}
	if rec.partial && rec.partialID.end > rec.partialID.off {
		return c.addPartial(rec, rec.truncated)
	}
	if rec.truncated {
		c.s.countTruncated()
	}
	mark := rec.mark
	if s := rec.shape; s != nil && s.hasAttrs && s.attrsGen == c.attrsGen && s.attrsTag == c.tag {
		// A record of this shape had the batch's attributes, which did
		// not change since.
	} else {
		if !c.attrsFrom.matches(rec, c.tag) {
			c.attrsFrom.set(rec, c.tag)
			sortExtras(rec)
			if !c.sameAttrs(rec) {
				var err error
				if mark, err = c.flushBefore(mark); err != nil {
					return err
				}
				c.setAttrs(c.recordAttrs(rec))
			}
		}
		if s != nil {
			s.hasAttrs, s.attrsGen, s.attrsTag = true, c.attrsGen, c.tag
		}
	}
	return c.appendLine(mark, rec.time, rec.stream, rec.truncated)
}

// setAttrs makes attrs the attributes of the lines that follow.
func (c *conn) setAttrs(attrs []stream.Attr) {
	c.attrs = attrs
	c.attrsGen++
}

// appendLine adds the line whose bytes are arena[mark:]. It writes the
// line's fields into c.lines one by one: a stream.Line built whole (as an
// argument or for append) was built on the stack and copied in 16-byte
// loads of the 8-byte stores that wrote it, which the CPU cannot forward
// from its store buffer (1.5% of FireLens-style Forward's CPU at max rate,
// on one instruction).
func (c *conn) appendLine(mark int, t time.Time, s string, truncated bool) error {
	end, n := len(c.arena), len(c.lines)
	c.lines = slices.Grow(c.lines, 1)[:n+1]
	l := &c.lines[n]
	l.Data, l.Time, l.Stream, l.Truncated = c.arena[mark:end:end], t, s, truncated
	if len(c.lines) >= maxBatchLines {
		return c.flush()
	}
	return nil
}

// reserve makes room for n more arena bytes (n <= arenaSize, which always
// fits an empty arena), flushing if needed.
func (c *conn) reserve(n int) error {
	if c.arena == nil {
		c.arena = c.s.arenas.get()
	}
	if cap(c.arena)-len(c.arena) >= n {
		return nil
	}
	return c.flush()
}

// releaseArena gives the empty arena back while the client is idle: docker
// keeps a connection per container open for its whole life, mostly idle.
func (c *conn) releaseArena() {
	if c.arena != nil && len(c.lines) == 0 {
		c.s.arenas.put(c.arena)
		c.arena = nil
	}
}

// flushBefore delivers the current batch while keeping arena[mark:] (the
// bytes of a line that starts a new batch); it returns their new offset.
func (c *conn) flushBefore(mark int) (int, error) {
	if len(c.lines) == 0 {
		return mark, nil
	}
	tail := len(c.arena) - mark
	c.arena = c.arena[:mark]
	if err := c.flush(); err != nil {
		return 0, err
	}
	c.arena = c.arena[:copy(c.arena[:tail], c.arena[mark:mark+tail])]
	return 0, nil
}

// flush delivers the batch and empties the arena; only where no record's
// bytes are being read into it.
func (c *conn) flush() error {
	err := c.deliver()
	c.arena = c.arena[:0]
	return err
}

// deliver hands the batch to the Sink, and the frames whose records it
// held are acknowledged once the batch is in the pipeline (Batch.Done).
// Under when_full: block the Sink waits while the pipeline refuses data:
// this connection is not read meanwhile, so the client's writes back up
// (TCP backpressure). Under a drop policy the Sink returns at once and
// the acks follow when the batch is in or was dropped and counted. Pieces
// of partial messages are acknowledged too (see package doc). The arena is
// left as it is: a record may be half read into it.
func (c *conn) deliver() error {
	c.held = false
	if len(c.lines) > 0 {
		b := stream.Batch{Attrs: c.attrs, Lines: c.lines}
		if len(c.acks) > 0 {
			chunks := slices.Clone(c.acks)
			c.acks = c.acks[:0]
			b.Done = func() { _ = c.writeAcks(chunks) } // a closed connection's client resends
		}
		if err := c.s.sink(c.s.sinkCtx, b); err != nil {
			return sinkError{err}
		}
		c.s.countRecords(len(c.lines))
		c.lastDelivery = c.s.now()
		clear(c.lines)
		c.lines = c.lines[:0]
	}
	if len(c.acks) == 0 {
		return nil
	}
	err := c.writeAcks(c.acks)
	c.acks = c.acks[:0]
	return err
}

// writeAcks acknowledges chunks.
func (c *conn) writeAcks(chunks []string) error {
	c.ackMu.Lock()
	defer c.ackMu.Unlock()
	c.ackBuf = c.ackBuf[:0]
	for _, chunk := range chunks {
		c.ackBuf = msgp.AppendMapHeader(c.ackBuf, 1)
		c.ackBuf = msgp.AppendString(c.ackBuf, "ack")
		c.ackBuf = msgp.AppendString(c.ackBuf, chunk)
	}
	_, err := c.w.Write(c.ackBuf)
	return err
}

// Attribute keys of a forward batch.
const (
	AttrContainerName = "container_name"
	AttrContainerID   = "container_id"
	AttrTag           = "fluent.tag"
)

// sameAttrs compares the record's attributes, in recordAttrs's order, with
// those of the current batch without allocating.
func (c *conn) sameAttrs(rec *fluentRecord) bool {
	a := c.attrs
	i := 0
	match := func(k string, v []byte) bool {
		if i >= len(a) || a[i].Key != k || a[i].Value != string(v) {
			return false
		}
		i++
		return true
	}
	if rec.hasName && !match(AttrContainerName, rec.bytes(rec.name)) {
		return false
	}
	if rec.hasID && !match(AttrContainerID, rec.bytes(rec.id)) {
		return false
	}
	if c.tag != "" {
		if i >= len(a) || a[i].Key != AttrTag || a[i].Value != c.tag {
			return false
		}
		i++
	}
	for _, e := range rec.extras {
		if i >= len(a) || a[i].Key != string(rec.bytes(e.key)) || a[i].Value != string(rec.bytes(e.value)) {
			return false
		}
		i++
	}
	return i == len(a)
}

// recordAttrs builds the attributes of a record: container_name,
// container_id, fluent.tag, then other string fields sorted by key.
func (c *conn) recordAttrs(rec *fluentRecord) []stream.Attr {
	attrs := make([]stream.Attr, 0, 3+len(rec.extras))
	if rec.hasName {
		attrs = append(attrs, stream.Attr{Key: AttrContainerName, Value: string(rec.bytes(rec.name))})
	}
	if rec.hasID {
		attrs = append(attrs, stream.Attr{Key: AttrContainerID, Value: string(rec.bytes(rec.id))})
	}
	if c.tag != "" {
		attrs = append(attrs, stream.Attr{Key: AttrTag, Value: c.tag})
	}
	for _, e := range rec.extras {
		attrs = append(attrs, stream.Attr{Key: string(rec.bytes(e.key)), Value: string(rec.bytes(e.value))})
	}
	return attrs
}

// recordFields is where a record's attribute fields lay in its scratch as
// it was read (before sortExtras), with the scratch's bytes and the frame's
// tag. A record that matches one has the same attributes: its fields came
// with the same values in the same order, as in nearly every record of a
// FireLens or docker stream, so one comparison of the bytes replaces
// sorting and comparing each attribute (about 500 instructions per
// FireLens-style line, 150 docker-style; bench/count-logpath.sh -forward).
type recordFields struct {
	valid          bool
	tag            string
	scratch        []byte
	name, id       scratchRange
	hasName, hasID bool
	extras         []extra
}

func (f *recordFields) matches(rec *fluentRecord, tag string) bool {
	return f.valid && f.name == rec.name && f.id == rec.id && f.hasName == rec.hasName && f.hasID == rec.hasID &&
		f.tag == tag && slices.Equal(f.extras, rec.extras) && bytes.Equal(f.scratch, rec.scratch)
}

func (f *recordFields) set(rec *fluentRecord, tag string) {
	*f = recordFields{valid: true, tag: tag, scratch: append(f.scratch[:0], rec.scratch...),
		name: rec.name, id: rec.id, hasName: rec.hasName, hasID: rec.hasID, extras: append(f.extras[:0], rec.extras...)}
}

// sortExtras orders the extra fields by key (docker writes a record's
// fields in random order); there are few, so insertion sort.
func sortExtras(rec *fluentRecord) {
	x := rec.extras
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && string(rec.bytes(x[j].key)) < string(rec.bytes(x[j-1].key)); j-- {
			x[j], x[j-1] = x[j-1], x[j]
		}
	}
}

// emitPartial adds a joined partial message as a line.
func (c *conn) emitPartial(p *pending) error {
	if err := c.reserve(len(p.data)); err != nil {
		return err
	}
	mark := len(c.arena)
	c.arena = append(c.arena, p.data...)
	if !slices.Equal(c.attrs, p.attrs) {
		var err error
		if mark, err = c.flushBefore(mark); err != nil {
			return err
		}
		c.setAttrs(p.attrs)
		c.attrsFrom.valid = false
	}
	if p.truncated {
		c.s.countTruncated()
	}
	t, s, truncated := p.time, p.stream, p.truncated
	c.partials.release(p)
	return c.appendLine(mark, t, s, truncated)
}
