package forward

// Records read again from their shape: a client sends its records with the
// same fields in the same order, only the line differing (FireLens's
// container and ecs_* fields, docker's container_id, container_name and
// source), so a record whose bytes but for its line's value are those of a
// record read before is read as that record was, without reading its fields
// one by one (readBufferedFields and bufferedField: about 1,500
// instructions per FireLens-style line, 850 docker-style;
// bench/count-logpath.sh -forward).

import (
	"bytes"

	"github.com/tinylib/msgp/msgp"
)

// Limits of the shapes a connection keeps, which it keeps while idle too:
// at most maxShapes × 2 × maxShapeBytes bytes (its head and tail, and the
// scratch copied from them).
const (
	// maxShapes is how many shapes a connection keeps. Docker's fluentd
	// driver writes a record from a Go map, whose iteration starts at a
	// random slot: a map of up to 8 fields (one group, or bucket, of
	// slots) comes in as many rotations of one order as it has fields.
	maxShapes = 8
	// maxShapeBytes bounds a shape's bytes around its line: a record with
	// more is read field by field.
	maxShapeBytes = 1 << 10
)

// shape is a record as it was read: its bytes before and after its line's
// value, and what reading them made of it.
type shape struct {
	// head is the record's bytes from its map header up to its line's
	// value (its header excluded), tail those after the value.
	head, tail []byte
	// rec is the record read, its line aside: its fields, scratch and
	// extras as readRecord left them. It stands for the records read as
	// the shape (readShaped sets its time and mark), and rec.shape points
	// back here.
	rec fluentRecord
	// attrsGen and attrsTag are the conn's attrsGen and tag when a record
	// of this shape was found to have the batch's attributes: while both
	// are still the same, its records have them too.
	attrsGen uint64
	attrsTag string
	hasAttrs bool
}

// shapes are the record shapes a connection read last.
type shapes struct {
	s    [maxShapes]shape
	n    int // shapes in s
	next int // the one replaced next
	last int // the one that matched last: tried first
}

// bufferedLine is where readBufferedFields found a record's line among the
// size bytes it read from the buffer (after the map header): its value
// with its header at [start, end), and how many line fields ("log",
// "message") the record had.
type bufferedLine struct {
	start, end, size int
	fields           int
}

// readShaped reads the record at the start of r's buffer as the shape whose
// bytes it has but for its line's value, if one has: its line into the
// arena, and returns the shape's record, its time rec's, to stand for it.
// It reads nothing and returns nil when no shape matches or the line is
// over maxLine.
func (c *conn) readShaped(r *msgp.Reader, rec *fluentRecord) (*fluentRecord, error) {
	i, v, end := c.matchShape(buffered(r))
	if i < 0 {
		return nil, nil
	}
	s := &c.shapes.s[i]
	if err := c.takeShaped(i, v); err != nil {
		return nil, err
	}
	s.rec.time = rec.time
	_, err := r.R.Skip(end) // buffered: cannot fail
	return &s.rec, err
}

// readShapedMessage reads a Message frame, [tag, EventTime, record] with
// or without a nil or empty option, as docker's fluentd driver writes a
// line, when r's buffer holds it whole and its record has a known shape:
// from the buffer at once, instead of through readFrame's steps. It reads
// nothing and returns false otherwise.
func (c *conn) readShapedMessage() (bool, error) {
	p := buffered(c.r)
	if c.shapes.n == 0 || len(p) < 2 || p[0] != 0x93 && p[0] != 0x94 {
		return false, nil
	}
	tag, off, ok := fixStr(p[1:])
	if !ok {
		if tag, off, ok = bufferedStr(p[1:]); !ok || len(tag) > maxTagBytes {
			return false, nil
		}
	}
	off++
	const timeSize = 10 // fixext8, type 0
	if len(p) < off+timeSize || p[off] != 0xd7 || p[off+1] != 0 {
		return false, nil
	}
	t := p[off+2 : off+timeSize]
	off += timeSize
	i, v, size := c.matchShape(p[off:])
	if i < 0 {
		return false, nil
	}
	end := off + size
	if p[0] == 0x94 {
		if len(p) <= end || p[end] != 0xc0 && p[end] != 0x80 { // nil, {}: no ack asked
			return false, nil
		}
		end++
	}
	c.betweenFrames = false
	c.setTag(tag)
	c.messageMode = true
	if err := c.takeShaped(i, v); err != nil {
		return true, err
	}
	rec := &c.shapes.s[i].rec
	rec.time = eventTime(t)
	if _, err := c.r.R.Skip(end); err != nil { // buffered: cannot fail
		return true, err
	}
	return true, c.handleRecord(rec)
}

// readShapedEntries reads the [EventTime, record] entries at the start of
// r's buffer whose records have known shapes, at most n, from the buffer at
// once instead of entry by entry, and returns how many it read: what Fluent
// Bit (FireLens) sends in its Forward and PackedForward frames.
func (c *conn) readShapedEntries(r *msgp.Reader, n uint32) (uint32, error) {
	if c.shapes.n == 0 {
		return 0, nil
	}
	p := buffered(r)
	off := 0
	var read uint32
	var err error
	const timeEnd = 11 // fixarray of 2, fixext8 of type 0
	for ; read < n && err == nil; read++ {
		q := p[off:]
		if len(q) <= timeEnd || q[0] != 0x92 || q[1] != 0xd7 || q[2] != 0 {
			break
		}
		i, v, size := c.matchShape(q[timeEnd:])
		if i < 0 {
			break
		}
		if err = c.takeShaped(i, v); err == nil {
			rec := &c.shapes.s[i].rec
			rec.time = eventTime(q[3:timeEnd])
			err = c.handleRecord(rec)
		}
		off += timeEnd + size
	}
	if _, serr := r.R.Skip(off); err == nil { // buffered: cannot fail
		err = serr
	}
	return read, err
}

// matchShape finds the shape of the record at the start of p, which holds
// it whole: it returns the shape's index, the record's line and the
// record's size, or -1 when no shape matches or the line is over maxLine.
func (c *conn) matchShape(p []byte) (int, []byte, int) {
	ss := &c.shapes
	for k := range ss.n {
		i := ss.last
		if k > 0 { // the others, after the one that matched last
			if i = k - 1; i >= ss.last {
				i++
			}
		}
		s := &ss.s[i]
		h := len(s.head)
		if len(p) <= h+len(s.tail) || !bytes.Equal(p[:h], s.head) {
			continue
		}
		v, size, ok := bufferedStr(p[h:]) // a line is seldom a fixstr
		if !ok || len(v) > c.maxLine {
			return -1, nil, 0
		}
		end := h + size + len(s.tail)
		if len(p) < end || !bytes.Equal(p[h+size:end], s.tail) {
			continue
		}
		return i, v, end
	}
	return -1, nil, 0
}

// takeShaped copies the line v of a record of shape i into the arena
// (which may deliver the batch to make room), its place in the shape's
// record.
func (c *conn) takeShaped(i int, v []byte) error {
	if err := c.reserve(len(v)); err != nil {
		return err
	}
	s := &c.shapes.s[i]
	s.rec.mark = len(c.arena)
	c.arena = append(c.arena, v...) // within the arena's capacity (reserve)
	c.shapes.last = i
	return nil
}

// keepShape keeps the record just read as a shape, when it was read whole
// from the buffer with one line field, not cut: rec its result and p the
// record's bytes, its line at [line.start, line.end).
func (c *conn) keepShape(rec *fluentRecord, p []byte, line bufferedLine) {
	if line.fields != 1 || !rec.hasLine || rec.truncated || len(p)-(line.end-line.start) > maxShapeBytes {
		return
	}
	ss := &c.shapes
	i := ss.next
	ss.next = (ss.next + 1) % maxShapes
	ss.n = max(ss.n, i+1)
	s := &ss.s[i]
	scratch, extras := s.rec.scratch, s.rec.extras
	s.rec = *rec
	s.rec.scratch = append(scratch[:0], rec.scratch...)
	s.rec.extras = append(extras[:0], rec.extras...)
	s.rec.shape = s
	s.head = append(s.head[:0], p[:line.start]...)
	s.tail = append(s.tail[:0], p[line.end:]...)
	s.hasAttrs, s.attrsTag = false, ""
	rec.shape = s
	ss.last = i
}
