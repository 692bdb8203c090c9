package forward

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tinylib/msgp/msgp"
)

// Limits that keep a hostile or broken client from making us allocate: the
// frame is decoded as a stream, so only these values are ever held whole.
const (
	readBufferSize = 64 << 10
	maxDepth       = 32       // nesting of values we skip
	maxTagBytes    = 1 << 10  // a tag longer than this is a bad frame
	maxKeyBytes    = 256      // record keys longer than this are skipped
	maxAttrBytes   = 4 << 10  // attribute values longer than this are skipped
	maxScratch     = 64 << 10 // a record's attribute bytes (repeated keys count)
	maxExtraAttrs  = 16       // further string fields of a record are ignored
	maxChunkBytes  = 1 << 10  // the ack id
)

// errBadFrame wraps every decoding error that ends a connection.
var errBadFrame = errors.New("malformed forward frame")

func badFrame(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadFrame, fmt.Sprintf(format, args...))
}

// span locates a value in record.scratch.
type span struct{ off, end int }

// record is one decoded event. It is reused for every record of a
// connection; scratch holds copies of its short string fields.
type record struct {
	time                 time.Time
	mark                 int  // the line is arena[mark:]
	hasLine, fromLog     bool // from "log", or else "message"
	truncated            bool
	stream               string
	name, id, partialID  span
	hasName, hasID       bool
	partial, partialLast bool
	extras               []extra
	scratch              []byte
}

type extra struct{ key, value span }

func (r *record) reset() {
	*r = record{extras: r.extras[:0], scratch: r.scratch[:0]}
}

func (r *record) bytes(s span) []byte { return r.scratch[s.off:s.end] }

// readFrame decodes one Forward protocol frame from c.r and hands its records
// to c.handleRecord. Malformed msgpack, or a frame of none of the four modes,
// is an error wrapping errBadFrame; io.EOF means the client closed cleanly
// between frames.
func (c *conn) readFrame() error {
	lead, err := c.r.R.PeekByte()
	if err != nil {
		return err // io.EOF between frames is a clean close
	}
	c.betweenFrames = false
	if lead == 0xc0 { // nil: a heartbeat some clients send on the stream
		return c.r.ReadNil()
	}
	n, err := c.r.ReadArrayHeader()
	if err != nil {
		return badFrame("frame is not an array: %v", err)
	}
	if n < 2 || n > 4 {
		return badFrame("frame has %d elements", n)
	}
	if err := c.readTag(); err != nil {
		return err
	}
	t, err := c.r.NextType()
	if err != nil {
		return badFrame("%v", err)
	}
	rest := n - 2
	switch t {
	case msgp.ArrayType: // Forward: [tag, [[time, record], ...], option?]
		if rest > 1 {
			return badFrame("forward frame has %d elements", n)
		}
		err = c.readForwardEntries()
	case msgp.StrType, msgp.BinType: // PackedForward, maybe gzip-compressed
		if rest > 1 {
			return badFrame("packed forward frame has %d elements", n)
		}
		err = c.readPackedEntries()
	default: // Message: [tag, time, record, option?]
		if rest < 1 {
			return badFrame("message frame without record")
		}
		rest--
		err = c.readEntry(c.r, false)
	}
	if err != nil {
		return err
	}
	chunk := ""
	if rest == 1 {
		if chunk, err = c.readOption(); err != nil {
			return err
		}
	}
	return c.frameDone(chunk)
}

// readTag reads the frame's tag, reusing the previous string when it is the
// same (it nearly always is).
func (c *conn) readTag() error {
	b, err := readShortString(c.r, maxTagBytes)
	if err != nil {
		return badFrame("tag: %v", err)
	}
	if string(b) != c.tag {
		c.tag = string(b)
	}
	return nil
}

func (c *conn) readForwardEntries() error {
	n, err := c.r.ReadArrayHeader()
	if err != nil {
		return badFrame("%v", err)
	}
	for range n {
		if err := c.readEntryArray(c.r); err != nil {
			return err
		}
	}
	return nil
}

// readPackedEntries decodes the concatenated [time, record] entries of a
// PackedForward frame without holding the payload: a second msgp.Reader reads
// them through a limit (and gunzip when the payload starts with gzip's
// magic; the "compressed" option follows the payload, so we cannot wait for it).
func (c *conn) readPackedEntries() error {
	size, err := readBinOrStrHeader(c.r)
	if err != nil {
		return badFrame("%v", err)
	}
	c.packedSrc.R = c.r
	c.packedSrc.N = int64(size)
	var src io.Reader = &c.packedSrc
	if size >= 2 {
		magic, err := c.r.R.Peek(2)
		if err != nil {
			return badFrame("packed entries: %v", err)
		}
		if magic[0] == 0x1f && magic[1] == 0x8b {
			if c.gzBuf == nil {
				c.gzBuf = bufio.NewReaderSize(&c.packedSrc, 32<<10)
				c.gz = new(gzip.Reader)
			} else {
				c.gzBuf.Reset(&c.packedSrc)
			}
			if err := c.gz.Reset(c.gzBuf); err != nil {
				return badFrame("gzip: %v", err)
			}
			src = c.gz
		}
	}
	if c.packed == nil {
		c.packed = msgp.NewReaderSize(src, readBufferSize)
		c.packed.SetMaxRecursionDepth(maxDepth)
	} else {
		c.packed.Reset(src)
	}
	for {
		if _, err := c.packed.R.PeekByte(); err == io.EOF {
			break
		} else if err != nil {
			return badFrame("packed entries: %v", err)
		}
		if err := c.readEntryArray(c.packed); err != nil {
			return err
		}
	}
	// Whatever gzip left unread (nothing, for a well-formed payload).
	if _, err := io.Copy(io.Discard, &c.packedSrc); err != nil {
		return badFrame("packed entries: %v", err)
	}
	if c.packedSrc.N > 0 {
		return badFrame("packed entries cut short")
	}
	return nil
}

// readEntryArray reads one [time, record] entry from r.
func (c *conn) readEntryArray(r *msgp.Reader) error {
	t, err := r.NextType()
	if err != nil {
		return badFrame("entry: %v", err)
	}
	if t != msgp.ArrayType {
		return c.skipBadRecord(r, "entry is not an array")
	}
	n, err := r.ReadArrayHeader()
	if err != nil {
		return badFrame("entry: %v", err)
	}
	if n != 2 {
		for range n {
			if err := r.Skip(); err != nil {
				return badFrame("entry: %v", err)
			}
		}
		c.s.countBadRecord()
		return nil
	}
	return c.readEntry(r, true)
}

// readEntry reads a time and a record from c.r and passes the record on.
// In an entry (not Message mode) the time may be the v1.5 [time, metadata].
func (c *conn) readEntry(r *msgp.Reader, inEntry bool) error {
	rec := &c.rec
	rec.reset()
	ok, err := readEventTime(r, inEntry, &rec.time)
	if err != nil {
		return err
	}
	if !ok {
		return c.skipBadRecord(r, "time is not an integer, float or EventTime")
	}
	t, err := r.NextType()
	if err != nil {
		return badFrame("record: %v", err)
	}
	if t != msgp.MapType {
		return c.skipBadRecord(r, "record is not a map")
	}
	rec.mark = len(c.arena)
	if err := c.readRecord(r, rec); err != nil {
		return err
	}
	return c.handleRecord(rec)
}

func (c *conn) skipBadRecord(r *msgp.Reader, why string) error {
	if err := r.Skip(); err != nil {
		return badFrame("%s: %v", why, err)
	}
	c.s.countBadRecord()
	return nil
}

// readEventTime reads an integer (seconds), a float (seconds) or an EventTime
// (ext 0: big-endian uint32 seconds, uint32 nanoseconds). ok is false, with
// the value skipped, for anything else.
func readEventTime(r *msgp.Reader, allowMetadata bool, out *time.Time) (ok bool, err error) {
	lead, err := r.R.PeekByte()
	if err != nil {
		return false, badFrame("time: %v", err)
	}
	switch {
	case lead <= 0x7f || lead >= 0xe0 || (lead >= 0xcc && lead <= 0xd3):
		sec, err := r.ReadInt64()
		if err != nil {
			return false, badFrame("time: %v", err)
		}
		*out = time.Unix(sec, 0)
		return true, nil
	case lead == 0xca || lead == 0xcb:
		f, err := r.ReadFloat64()
		if err != nil {
			return false, badFrame("time: %v", err)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<40 {
			return false, nil
		}
		sec, frac := math.Modf(f)
		*out = time.Unix(int64(sec), int64(frac*1e9))
		return true, nil
	case lead == 0xd7 || lead == 0xc7: // fixext8, or ext8 with length 8
		hdr := 2
		if lead == 0xc7 {
			hdr = 3
		}
		p, err := r.R.Peek(hdr)
		if err != nil {
			return false, badFrame("time: %v", err)
		}
		if (lead == 0xc7 && p[1] != 8) || p[hdr-1] != 0 {
			return false, skipValue(r)
		}
		p, err = r.R.Next(hdr + 8)
		if err != nil {
			return false, badFrame("time: %v", err)
		}
		sec := binary.BigEndian.Uint32(p[hdr:])
		nsec := binary.BigEndian.Uint32(p[hdr+4:])
		*out = time.Unix(int64(sec), int64(nsec))
		return true, nil
	case allowMetadata && (lead&0xf0 == 0x90 || lead == 0xdc || lead == 0xdd):
		n, err := r.ReadArrayHeader()
		if err != nil {
			return false, badFrame("time: %v", err)
		}
		if n == 0 {
			return false, nil
		}
		ok, err := readEventTime(r, false, out)
		if err != nil {
			return false, err
		}
		for range n - 1 { // the v1.5 metadata map
			if err := r.Skip(); err != nil {
				return false, badFrame("time metadata: %v", err)
			}
		}
		return ok, nil
	}
	return false, skipValue(r)
}

func skipValue(r *msgp.Reader) error {
	if err := r.Skip(); err != nil {
		return badFrame("%v", err)
	}
	return nil
}

// readRecord reads a record map: log/message into the arena, the fields we
// turn into attributes into rec.scratch; everything else is skipped.
func (c *conn) readRecord(r *msgp.Reader, rec *record) error {
	n, err := r.ReadMapHeader()
	if err != nil {
		return badFrame("record: %v", err)
	}
	for range n {
		key, err := readKey(r)
		if err != nil {
			return err
		}
		if key == nil { // not a short string: skip its value too
			if err := skipValue(r); err != nil {
				return err
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
			var s span
			var ok bool
			if s, ok, err = c.readAttrValue(r, rec); ok {
				switch string(rec.bytes(s)) {
				case "stdout":
					rec.stream = "stdout"
				case "stderr":
					rec.stream = "stderr"
				}
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
			return err
		}
	}
	return nil
}

// readKey returns a key of at most maxKeyBytes (valid until the next read),
// or nil with the key consumed when it is longer, empty or not a string.
func readKey(r *msgp.Reader) ([]byte, error) {
	t, err := r.NextType()
	if err != nil {
		return nil, badFrame("key: %v", err)
	}
	if t != msgp.StrType && t != msgp.BinType {
		return nil, skipValue(r)
	}
	n, err := readBinOrStrHeader(r)
	if err != nil {
		return nil, badFrame("key: %v", err)
	}
	if n == 0 || n > maxKeyBytes {
		if _, err := r.R.Skip(int(n)); err != nil {
			return nil, badFrame("key: %v", err)
		}
		return nil, nil
	}
	b, err := r.R.Next(int(n))
	if err != nil {
		return nil, badFrame("key: %v", err)
	}
	return b, nil
}

// readLine appends a str/bin value to the arena as rec's line, keeping at
// most maxLine bytes and discarding the rest without buffering it. ok is
// false, with the value skipped, for other types. The line is the only
// arena content of a record, so making room for it may deliver the batch.
func (c *conn) readLine(r *msgp.Reader, rec *record) (ok, truncated bool, err error) {
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
	if err := c.reserve(keep); err != nil {
		return false, false, err
	}
	start := len(c.arena)
	rec.mark = start
	c.arena = c.arena[:start+keep]
	if _, err := r.ReadFull(c.arena[start:]); err != nil {
		return false, false, badFrame("log: %v", err)
	}
	if int(n) > keep {
		if _, err := r.R.Skip(int(n) - keep); err != nil {
			return false, false, badFrame("log: %v", err)
		}
		truncated = true
	}
	return true, truncated, nil
}

// readAttrValue copies a short string value into rec.scratch; ok is false
// (value skipped) for other types and long values.
func (c *conn) readAttrValue(r *msgp.Reader, rec *record) (s span, ok bool, err error) {
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
	if n > maxAttrBytes || len(rec.scratch)+int(n) > maxScratch {
		if _, err := r.R.Skip(int(n)); err != nil {
			return s, false, badFrame("%v", err)
		}
		return s, false, nil
	}
	b, err := r.R.Next(int(n))
	if err != nil {
		return s, false, badFrame("%v", err)
	}
	s.off = len(rec.scratch)
	rec.scratch = append(rec.scratch, b...)
	s.end = len(rec.scratch)
	return s, true, nil
}

// readTrue reads docker's "true"/"false" strings (or a msgpack bool).
func (c *conn) readTrue(r *msgp.Reader, rec *record) (bool, error) {
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
func (c *conn) readExtra(r *msgp.Reader, rec *record, key []byte) error {
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

// readOption reads the option map and returns its chunk (the ack id), if
// any. "size" and "compressed" need no action: entries are counted as they
// come, and gzip is recognised by its magic bytes.
func (c *conn) readOption() (string, error) {
	t, err := c.r.NextType()
	if err != nil {
		return "", badFrame("option: %v", err)
	}
	if t != msgp.MapType {
		return "", skipValue(c.r) // nil or junk: no ack requested
	}
	n, err := c.r.ReadMapHeader()
	if err != nil {
		return "", badFrame("option: %v", err)
	}
	chunk := ""
	for range n {
		key, err := readKey(c.r)
		if err != nil {
			return "", err
		}
		if string(key) != "chunk" {
			if err := skipValue(c.r); err != nil {
				return "", err
			}
			continue
		}
		t, err := c.r.NextType()
		if err != nil {
			return "", badFrame("chunk: %v", err)
		}
		if t != msgp.StrType && t != msgp.BinType {
			return "", badFrame("chunk is not a string")
		}
		b, err := readShortString(c.r, maxChunkBytes)
		if err != nil {
			return "", badFrame("chunk: %v", err)
		}
		chunk = string(b)
	}
	return chunk, nil
}

// readBinOrStrHeader reads the length of a str or bin value.
func readBinOrStrHeader(r *msgp.Reader) (uint32, error) {
	lead, err := r.R.PeekByte()
	if err != nil {
		return 0, err
	}
	if lead&0xe0 == 0xa0 { // fixstr
		_, err := r.R.Skip(1)
		return uint32(lead & 0x1f), err
	}
	var hdr int
	switch lead {
	case 0xd9, 0xc4: // str8, bin8
		hdr = 2
	case 0xda, 0xc5: // str16, bin16
		hdr = 3
	case 0xdb, 0xc6: // str32, bin32
		hdr = 5
	default:
		return 0, fmt.Errorf("want str or bin, got 0x%02x", lead)
	}
	p, err := r.R.Next(hdr)
	if err != nil {
		return 0, err
	}
	switch hdr {
	case 2:
		return uint32(p[1]), nil
	case 3:
		return uint32(binary.BigEndian.Uint16(p[1:])), nil
	}
	return binary.BigEndian.Uint32(p[1:]), nil
}

// readShortString reads a str/bin of at most limit bytes; the result is
// valid until the next read.
func readShortString(r *msgp.Reader, limit int) ([]byte, error) {
	n, err := readBinOrStrHeader(r)
	if err != nil {
		return nil, err
	}
	if int(n) > limit {
		return nil, fmt.Errorf("string of %d bytes, limit %d", n, limit)
	}
	return r.R.Next(int(n))
}
