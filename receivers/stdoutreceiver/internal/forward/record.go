package forward

// Reading one record map of a frame's entry: its line ("log" or "message")
// into the connection's arena, the fields kept as attributes into the
// record's scratch. frame.go reads the frames around it.

import (
	"time"

	"github.com/tinylib/msgp/msgp"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// scratchRange is where a value lies in fluentRecord.scratch.
type scratchRange struct{ off, end int }

// fluentRecord is one decoded Fluent record, the envelope of a line. It is
// reused for every record of a connection; scratch holds copies of its short
// string fields.
type fluentRecord struct {
	time                 time.Time
	mark                 int  // the line is arena[mark:]
	hasLine, fromLog     bool // from "log", or else "message"
	truncated            bool
	stream               string
	name, id, partialID  scratchRange
	hasName, hasID       bool
	partial, partialLast bool
	extras               []extra
	scratch              []byte
	// shape is the shape the record was read as, or kept as (template.go);
	// nil when neither.
	shape *shape
}

// extra is a further string field kept as an attribute.
type extra struct{ key, value scratchRange }

func (r *fluentRecord) reset() {
	*r = fluentRecord{extras: r.extras[:0], scratch: r.scratch[:0]}
}

func (r *fluentRecord) bytes(s scratchRange) []byte { return r.scratch[s.off:s.end] }

// readRecord reads a record map: log/message into the arena, the fields we
// turn into attributes into rec.scratch; everything else is skipped.
//
// It returns the record read: rec, or the record of the shape it was read
// as (template.go).
func (c *conn) readRecord(r *msgp.Reader, rec *fluentRecord) (*fluentRecord, error) {
	if shaped, err := c.readShaped(r, rec); shaped != nil || err != nil {
		return shaped, err
	}
	var n, read uint32
	var err error
	if buf := buffered(r); len(buf) > 0 && buf[0]&0xf0 == 0x80 { // a fixmap, as records are
		n = uint32(buf[0] & 0x0f)
		_, _ = r.R.Skip(1) // buffered: cannot fail
		var line bufferedLine
		if read, line, err = c.readBufferedFields(r, rec, n); err != nil {
			return nil, err
		}
		if read == n { // read whole from buf, which still holds it (Skip keeps the buffered bytes)
			line.start, line.end = line.start+1, line.end+1
			c.keepShape(rec, buf[:1+line.size], line)
			return rec, nil
		}
	} else {
		if n, err = r.ReadMapHeader(); err != nil {
			return nil, badFrame("record: %v", err)
		}
		if read, _, err = c.readBufferedFields(r, rec, n); err != nil {
			return nil, err
		}
	}
	for range n - read {
		key, err := readKey(r)
		if err != nil {
			return nil, err
		}
		if key == nil { // not a short string: skip its value too
			if err := skipValue(r); err != nil {
				return nil, err
			}
			continue
		}
		switch string(key) {
		case "log": // replaces a "message" (or an earlier "log") read before it
			c.arena = c.arena[:rec.mark]
			rec.hasLine, rec.truncated, err = c.readLine(r, rec)
			rec.fromLog = rec.hasLine
		case "message":
			if rec.fromLog {
				err = skipValue(r)
				break
			}
			c.arena = c.arena[:rec.mark]
			rec.hasLine, rec.truncated, err = c.readLine(r, rec)
		case "source":
			var s scratchRange
			var ok bool
			if s, ok, err = c.readAttrValue(r, rec); ok {
				rec.setStream(s)
			}
		case "container_name":
			rec.name, rec.hasName, err = c.readAttrValue(r, rec)
		case "container_id":
			rec.id, rec.hasID, err = c.readAttrValue(r, rec)
		case "partial_id":
			rec.partialID, _, err = c.readAttrValue(r, rec)
		case "partial_message":
			rec.partial, err = c.readTrue(r, rec)
		case "partial_last":
			rec.partialLast, err = c.readTrue(r, rec)
		case "partial_ordinal":
			err = skipValue(r)
		default:
			err = c.readExtra(r, rec, key)
		}
		if err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// readBufferedFields reads the fields at the start of a record of n that
// lie whole in r's buffer, string keys with string values as nearly all
// are, straight from the buffer: reading each key and value through msgp
// costs more than what is done with them (about 1,500 instructions per
// FireLens-style line, 800 docker-style; bench/count-logpath.sh -forward).
// It stops at the first field it leaves to readRecord's loop, which reads
// fields from the stream (a value of another type or one the buffer does
// not hold whole, a line over maxLine, docker's partial_* flags), and
// returns how many it read. It never reads from the connection. What it
// does with a field is what readRecord's loop does with the same field.
//
// line is where the record's line lay in what it read, and size how many
// bytes it read (for keepShape).
func (c *conn) readBufferedFields(r *msgp.Reader, rec *fluentRecord, n uint32) (uint32, bufferedLine, error) {
	buf := buffered(r)
	off := 0
	var read uint32
	var line bufferedLine
	for ; read < n; read++ {
		key, keySize, ok := fixStr(buf[off:])
		if !ok {
			key, keySize, ok = bufferedStr(buf[off:])
		}
		if !ok || len(key) == 0 || len(key) > maxKeyBytes {
			break
		}
		v, valueSize, ok := fixStr(buf[off+keySize:])
		if !ok {
			v, valueSize, ok = bufferedStr(buf[off+keySize:])
		}
		if !ok {
			break
		}
		if ok, err := c.bufferedField(rec, key, v); err != nil {
			return 0, line, err
		} else if !ok {
			break
		}
		if string(key) == "log" || string(key) == "message" {
			line.fields++
			line.start, line.end = off+keySize, off+keySize+valueSize
		}
		off += keySize + valueSize
	}
	line.size = off
	if _, err := r.R.Skip(off); err != nil {
		return 0, line, badFrame("record: %v", err)
	}
	return read, line, nil
}

// bufferedField does with the field key: v (a string value) what
// readRecord's loop does, or returns false, doing nothing, for the fields
// it leaves to that loop.
func (c *conn) bufferedField(rec *fluentRecord, key, v []byte) (bool, error) {
	switch string(key) {
	case "log", "message":
		if string(key) == "message" && rec.fromLog {
			return true, nil
		}
		if len(v) > c.maxLine {
			return false, nil
		}
		c.arena = c.arena[:rec.mark]
		if err := c.reserve(len(v)); err != nil {
			return false, err
		}
		rec.mark = len(c.arena)
		c.arena = append(c.arena, v...) // within the arena's capacity (reserve)
		rec.hasLine, rec.truncated = true, false
		rec.fromLog = rec.fromLog || string(key) == "log"
	case "source":
		if s, ok := keepAttr(rec, v); ok {
			rec.setStream(s)
		}
	case "container_name":
		rec.name, rec.hasName = keepAttr(rec, v)
	case "container_id":
		rec.id, rec.hasID = keepAttr(rec, v)
	case "partial_id":
		rec.partialID, _ = keepAttr(rec, v)
	case "partial_message", "partial_last", "partial_ordinal":
		return false, nil
	default:
		if len(rec.extras) >= maxExtraAttrs {
			return true, nil
		}
		e := extra{key: scratchRange{off: len(rec.scratch)}}
		rec.scratch = append(rec.scratch, key...)
		e.key.end = len(rec.scratch)
		var ok bool
		if e.value, ok = keepAttr(rec, v); !ok {
			rec.scratch = rec.scratch[:e.key.off]
			return true, nil
		}
		rec.extras = append(rec.extras, e)
	}
	return true, nil
}

// setStream sets the record's stream from its source field s.
func (r *fluentRecord) setStream(s scratchRange) {
	switch string(r.bytes(s)) {
	case "stdout":
		r.stream = "stdout"
	case "stderr":
		r.stream = "stderr"
	}
}

// attrFits reports whether an attribute value of n bytes is kept: longer
// ones, or ones past the record's scratch limit, are dropped.
func attrFits(rec *fluentRecord, n int) bool {
	return n <= maxAttrBytes && len(rec.scratch)+n <= maxScratch
}

// keepAttr copies the attribute value v into rec.scratch if it fits.
func keepAttr(rec *fluentRecord, v []byte) (s scratchRange, ok bool) {
	if !attrFits(rec, len(v)) {
		return s, false
	}
	s.off = len(rec.scratch)
	rec.scratch = append(rec.scratch, v...)
	s.end = len(rec.scratch)
	return s, true
}

// readLine appends a str/bin value to the arena as rec's line: at most
// maxLine bytes, then what c.skim keeps of the rest (as on stdin, an
// oversized JSON line keeps its later members), the rest discarded without
// buffering it. ok is false, with the value skipped, for other types. The
// line is the only arena content of a record, so making room for it may
// deliver the batch.
func (c *conn) readLine(r *msgp.Reader, rec *fluentRecord) (ok, truncated bool, err error) {
	t, err := r.NextType()
	if err != nil {
		return false, false, badFrame("log: %v", err)
	}
	if t != msgp.StrType && t != msgp.BinType {
		return false, false, skipValue(r)
	}
	n, err := readBinOrStrHeader(r)
	if err != nil {
		return false, false, badFrame("log: %v", err)
	}
	keep := int(min(n, uint32(c.maxLine)))
	truncated = int(n) > keep
	room := keep
	if truncated {
		room += stream.SkimOverflowBytes
	}
	if err := c.reserve(room); err != nil {
		return false, false, err
	}
	start := len(c.arena)
	rec.mark = start
	c.arena = c.arena[:start+keep]
	if _, err := r.ReadFull(c.arena[start:]); err != nil {
		return false, false, badFrame("log: %v", err)
	}
	if truncated {
		c.arena = c.arena[:start+c.skim.Start(c.arena[start:])]
		for rest := int(n) - keep; rest > 0; {
			b, err := r.R.Next(min(rest, skimChunk))
			if err != nil {
				return false, false, badFrame("log: %v", err)
			}
			c.arena = c.skim.Overflow(c.arena, b)
			rest -= len(b)
		}
	}
	return true, truncated, nil
}

// skimChunk is how much of a line past the limit is read at a time: less
// than the decoder's read buffer.
const skimChunk = 16 << 10

// readAttrValue copies a short string value into rec.scratch; ok is false
// (value skipped) for other types and long values.
func (c *conn) readAttrValue(r *msgp.Reader, rec *fluentRecord) (s scratchRange, ok bool, err error) {
	t, err := r.NextType()
	if err != nil {
		return s, false, badFrame("%v", err)
	}
	if t != msgp.StrType && t != msgp.BinType {
		return s, false, skipValue(r)
	}
	n, err := readBinOrStrHeader(r)
	if err != nil {
		return s, false, badFrame("%v", err)
	}
	if !attrFits(rec, int(n)) {
		if _, err := r.R.Skip(int(n)); err != nil {
			return s, false, badFrame("%v", err)
		}
		return s, false, nil
	}
	b, err := r.R.Next(int(n))
	if err != nil {
		return s, false, badFrame("%v", err)
	}
	s, ok = keepAttr(rec, b)
	return s, ok, nil
}

// readTrue reads docker's "true"/"false" strings (or a msgpack bool).
func (c *conn) readTrue(r *msgp.Reader, rec *fluentRecord) (bool, error) {
	lead, err := r.R.PeekByte()
	if err != nil {
		return false, badFrame("%v", err)
	}
	if lead == 0xc3 || lead == 0xc2 {
		v, err := r.ReadBool()
		if err != nil {
			return false, badFrame("%v", err)
		}
		return v, nil
	}
	mark := len(rec.scratch)
	s, ok, err := c.readAttrValue(r, rec)
	v := ok && string(rec.bytes(s)) == "true"
	rec.scratch = rec.scratch[:mark]
	return v, err
}

// readExtra keeps another short string field as an attribute (docker's
// labels/env options, or the ecs_* fields of an upstream Fluent Bit).
func (c *conn) readExtra(r *msgp.Reader, rec *fluentRecord, key []byte) error {
	if len(rec.extras) >= maxExtraAttrs {
		return skipValue(r)
	}
	var e extra
	e.key.off = len(rec.scratch)
	rec.scratch = append(rec.scratch, key...)
	e.key.end = len(rec.scratch)
	v, ok, err := c.readAttrValue(r, rec)
	if !ok || err != nil {
		rec.scratch = rec.scratch[:e.key.off]
		return err
	}
	e.value = v
	rec.extras = append(rec.extras, e)
	return nil
}
