package forward

// Reading Forward protocol frames from a connection: the four modes, their
// [time, record] entries, event times and the option's ack chunk. Each
// record map is read by record.go; msgpack.go has the small msgpack reads
// both need.

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
	readBufferSize = 64 << 10 // and streamReadSize while the client is ahead
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

// readFrame decodes one Forward protocol frame from c.r and hands its records
// to c.handleRecord. Malformed msgpack, or a frame of none of the four modes,
// is an error wrapping errBadFrame; io.EOF means the client closed cleanly
// between frames.
func (c *conn) readFrame() error {
	if ok, err := c.readShapedMessage(); ok {
		return err
	}
	lead, err := c.r.R.PeekByte()
	if err != nil {
		return err // io.EOF between frames is a clean close
	}
	c.betweenFrames = false
	if lead == 0xc0 { // nil: a heartbeat some clients send on the stream
		return c.r.ReadNil()
	}
	var n uint32
	if lead&0xf0 == 0x90 { // a fixarray, as frames are: read from the buffer
		n = uint32(lead & 0x0f)
		if _, err := c.r.R.Skip(1); err != nil {
			return badFrame("frame: %v", err)
		}
	} else if n, err = c.r.ReadArrayHeader(); err != nil {
		return badFrame("frame is not an array: %v", err)
	}
	if n < 2 || n > 4 {
		return badFrame("frame has %d elements", n)
	}
	if err := c.readTag(); err != nil {
		return err
	}
	var t msgp.Type
	if p := buffered(c.r); len(p) >= 2 && p[0] == 0xd7 {
		t = msgp.ExtensionType // fixext8: a Message frame's EventTime (NextType would peek its extension header)
	} else if t, err = c.r.NextType(); err != nil {
		return badFrame("%v", err)
	}
	rest := n - 2
	c.messageMode = false
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
		c.messageMode = true
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

// readTag reads the frame's tag, from the buffer when it holds it whole,
// reusing the previous string when it is the same (it nearly always is).
func (c *conn) readTag() error {
	b, size, ok := bufferedStr(buffered(c.r))
	if ok && len(b) <= maxTagBytes {
		c.setTag(b)
		_, err := c.r.R.Skip(size) // buffered: cannot fail
		return err
	}
	b, err := readShortString(c.r, maxTagBytes)
	if err != nil {
		return badFrame("tag: %v", err)
	}
	c.setTag(b)
	return nil
}

func (c *conn) setTag(b []byte) {
	if string(b) != c.tag {
		c.tag = string(b)
	}
}

func (c *conn) readForwardEntries() error {
	n, err := c.r.ReadArrayHeader()
	if err != nil {
		return badFrame("%v", err)
	}
	for n > 0 {
		read, err := c.readShapedEntries(c.r, n)
		if err != nil {
			return err
		}
		if n -= read; n == 0 {
			break
		}
		if err := c.readEntryArray(c.r); err != nil {
			return err
		}
		n--
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
		if _, err := c.readShapedEntries(c.packed, math.MaxUint32); err != nil {
			return err
		}
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
	if lead, err := r.R.PeekByte(); err == nil && lead == 0x92 { // a fixarray of 2, as nearly always
		if _, err := r.R.Skip(1); err != nil {
			return badFrame("entry: %v", err)
		}
		return c.readEntry(r, true)
	}
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
	if !readBufferedEventTime(r, &rec.time) {
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
	}
	rec.mark = len(c.arena)
	read, err := c.readRecord(r, rec)
	if err != nil {
		return err
	}
	return c.handleRecord(read)
}

func (c *conn) skipBadRecord(r *msgp.Reader, why string) error {
	if err := r.Skip(); err != nil {
		return badFrame("%s: %v", why, err)
	}
	c.s.countBadRecord()
	return nil
}

// readBufferedEventTime reads an EventTime followed by a map, as senders
// write entries, when r's buffer holds both: straight from the buffer
// instead of through readEventTime's reads and a NextType. It reads
// nothing and returns false otherwise.
func readBufferedEventTime(r *msgp.Reader, out *time.Time) bool {
	const size = 10 // fixext8, type 0
	buf := buffered(r)
	if len(buf) <= size || buf[0] != 0xd7 || buf[1] != 0 {
		return false
	}
	switch lead := buf[size]; {
	case lead&0xf0 == 0x80, lead == 0xde, lead == 0xdf: // fixmap, map16, map32
	default:
		return false
	}
	*out = eventTime(buf[2:size])
	_, err := r.R.Skip(size) // buffered: cannot fail
	return err == nil
}

// eventTime is the time of an EventTime's 8 bytes: big-endian uint32
// seconds and nanoseconds.
func eventTime(p []byte) time.Time {
	return time.Unix(int64(binary.BigEndian.Uint32(p)), int64(binary.BigEndian.Uint32(p[4:])))
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
		*out = eventTime(p[hdr:])
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
