// Package queuedevents is the form in which the axiom exporter's
// persistent queue stores logs: the events the exporter sends to Axiom,
// encoded once when the request is queued. Read back, a request is ready to
// compress and send, with no records to rebuild: queuedlogs' compact form,
// which the queue wrote before, was encoded to, decoded from and then
// encoded to events again, which with the GC's share cost a fifth of the
// sidecar's instructions with the disk buffer on.
//
// An event that begins with its scope's head (what the exporter splices in
// front of a raw body's members: the resource and shared attributes of
// files' and Fluent Forward's records) is stored without it, and each head
// once: with the head on every event, a kubernetes file's requests took
// twice the bytes of the compact form, on disk and in the 2 MiB that
// dir_storage holds in memory when its folder is unusable.
//
// Layout: Magic; the number of events (fixed 32 bits, little endian); the
// request's weight (fixed 64: what the queue counted it for, so that it
// takes back as much); the length in bytes of the events without their
// heads, then of the heads (fixed 64 each); those events, one after the
// other; the heads; the number of heads and each one's length (varints);
// then for each event the head it begins with (0 for none, else 1 + its
// index) and its length without it (varints).
package queuedevents

import (
	"encoding/binary"
	"errors"
)

// Magic begins a request in this form. A protobuf message never begins
// with a zero byte, and queuedlogs' form has a magic of its own.
const Magic = "\x00se\x01"

const headerSize = len(Magic) + 4 + 8 + 8 + 8

// Is reports whether b is a request in this form.
func Is(b []byte) bool { return len(b) >= len(Magic) && string(b[:len(Magic)]) == Magic }

// Writer writes one request: Begin, then the events (each without its
// head) appended to the buffer with Event after each, then Finish.
type Writer struct {
	heads    []byte
	headEnds []int
	table    []byte // each event's head and length
	start    int    // where the events begin in the buffer
	last     int    // where the last event ended
	count    int
}

// Begin returns a buffer that holds the header, with room for size bytes of
// events after it.
func (w *Writer) Begin(size, count int) []byte {
	w.heads, w.headEnds, w.table = w.heads[:0], w.headEnds[:0], w.table[:0]
	w.start, w.last, w.count = headerSize, headerSize, 0
	b := make([]byte, headerSize, headerSize+size+3*count)
	copy(b, Magic)
	return b
}

// Event records the event that ends at the end of b, and head, the head it
// begins with and that is not in b (nil for none).
func (w *Writer) Event(b []byte, head []byte) {
	ref := 0
	if len(head) > 0 {
		ref = len(w.headEnds)
		if ref == 0 || string(w.heads[w.headStart(ref-1):]) != string(head) {
			w.heads = append(w.heads, head...)
			w.headEnds = append(w.headEnds, len(w.heads))
			ref++
		}
	}
	w.table = binary.AppendUvarint(w.table, uint64(ref))
	w.table = binary.AppendUvarint(w.table, uint64(len(b)-w.last))
	w.last = len(b)
	w.count++
}

func (w *Writer) headStart(i int) int {
	if i == 0 {
		return 0
	}
	return w.headEnds[i-1]
}

// Finish completes b with the request's weight.
func (w *Writer) Finish(b []byte, weight int) []byte {
	binary.LittleEndian.PutUint32(b[len(Magic):], uint32(w.count))
	binary.LittleEndian.PutUint64(b[len(Magic)+4:], uint64(weight))
	binary.LittleEndian.PutUint64(b[len(Magic)+12:], uint64(len(b)-w.start))
	binary.LittleEndian.PutUint64(b[len(Magic)+20:], uint64(len(w.heads)))
	b = append(b, w.heads...)
	b = binary.AppendUvarint(b, uint64(len(w.headEnds)))
	for i, end := range w.headEnds {
		b = binary.AppendUvarint(b, uint64(end-w.headStart(i)))
	}
	return append(b, w.table...)
}

var errCorrupt = errors.New("queuedevents: a queued request is cut short or corrupt")

// Read returns the events of a request in this form (Is(b)), each one's end
// offset in events, and the request's weight. Events stored without a head
// slice b, which Read takes over (capped: an append to events copies them);
// events are put together with their heads in a buffer of their own.
func Read(b []byte) (events []byte, ends []int, weight int, err error) {
	if len(b) < headerSize || !Is(b) {
		return nil, nil, 0, errCorrupt
	}
	count := uint64(binary.LittleEndian.Uint32(b[len(Magic):]))
	weight64 := binary.LittleEndian.Uint64(b[len(Magic)+4:])
	own := binary.LittleEndian.Uint64(b[len(Magic)+12:])
	headBytes := binary.LittleEndian.Uint64(b[len(Magic)+20:])
	rest := uint64(len(b) - headerSize)
	// Each event takes a byte at least, and its table entry two.
	if own > rest || headBytes > rest-own || count > own || 2*count > rest-own-headBytes || weight64 > 1<<62 {
		return nil, nil, 0, errCorrupt
	}
	ownLen, headLen := int(own), int(headBytes)
	stored := b[headerSize : headerSize+ownLen : headerSize+ownLen]
	heads := b[headerSize+ownLen : headerSize+ownLen+headLen]
	t := table{b: b[headerSize+ownLen+headLen:]}
	nHeads := int(t.next(headBytes))
	headEnds := make([]int, nHeads)
	headEnd := 0
	for i := range headEnds {
		headEnd += int(t.next(uint64(headLen - headEnd)))
		headEnds[i] = headEnd
	}
	if t.bad || headEnd != headLen {
		return nil, nil, 0, errCorrupt
	}
	ends = make([]int, count)
	refs := make([]int, 0, int(count)*min(nHeads, 1))
	total, ownEnd := 0, 0
	for i := range ends {
		ref := int(t.next(uint64(nHeads)))
		n := int(t.next(uint64(ownLen - ownEnd)))
		if n == 0 {
			t.bad = true
		}
		if nHeads > 0 {
			refs = append(refs, ref)
			if ref > 0 {
				total += headEnds[ref-1] - start(headEnds, ref-1)
			}
		}
		ownEnd += n
		total += n
		ends[i] = total
	}
	if t.bad || ownEnd != ownLen || len(t.b) != 0 {
		return nil, nil, 0, errCorrupt
	}
	if nHeads == 0 {
		return stored, ends, int(weight64), nil
	}
	events = make([]byte, 0, total)
	from := 0
	for i, ref := range refs {
		if ref > 0 {
			events = append(events, heads[start(headEnds, ref-1):headEnds[ref-1]]...)
		}
		n := ends[i] - len(events)
		events = append(events, stored[from:from+n]...)
		from += n
	}
	return events, ends, int(weight64), nil
}

func start(ends []int, i int) int {
	if i == 0 {
		return 0
	}
	return ends[i-1]
}

// table reads varints of at most a limit each; the first bad one sticks.
type table struct {
	b   []byte
	bad bool
}

func (t *table) next(limit uint64) uint64 {
	if t.bad {
		return 0
	}
	v, n := binary.Uvarint(t.b)
	if n <= 0 || v > limit {
		t.bad = true
		return 0
	}
	t.b = t.b[n:]
	return v
}
