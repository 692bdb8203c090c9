package decode

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"slices"

	"github.com/sidecarhq/sidecar/internal/jsontext"
)

// A validating scan of one JSON object per line: jsontext.Members walks the
// line once, checks that it is exactly one well-formed JSON object and
// records where each top-level member sits; the keys are then looked at
// once each, to find the ones a later member of the same key supersedes, so
// the body can be produced by splicing the original bytes: no map, no
// pcommon.Map.

// member locates one top-level "key": value pair in the line.
type member = jsontext.Member

// Keys the decoder looks at; object.known holds the last occurrence of each.
const (
	keyUnderscoreTime = iota // _time
	keyTime                  // time (pino, bunyan, logrus, slog)
	keyTimestamp             // timestamp (winston)
	keyTs                    // ts (zap)
	keyAtTimestamp           // @timestamp (ECS)
	keyLevel                 // level
	keyLogLevel              // log.level (ECS)
	keySeverity              // severity (Google Cloud Logging's structured logs)
	keyTraceID               // trace_id
	keyTraceIDCamel          // traceId
	keySpanID                // span_id
	keySpanIDCamel           // spanId
	keyResourceSpans         // resourceSpans (OTLP/JSON traces)
	numKeys
)

// keyNames are the keys by index, as keyIndex finds them.
var keyNames = [numKeys]string{"_time", "time", "timestamp", "ts", "@timestamp", "level", "log.level",
	"severity", "trace_id", "traceId", "span_id", "spanId", "resourceSpans"}

// knownKeyBits has the filterBit of each of keyNames.
var knownKeyBits = func() (bits uint64) {
	for _, k := range keyNames {
		bits |= filterBit([]byte(k))
	}
	return bits
}()

func keyIndex(k []byte) int {
	switch string(k) { // the compiler does not allocate for this conversion
	case "_time":
		return keyUnderscoreTime
	case "time":
		return keyTime
	case "timestamp":
		return keyTimestamp
	case "ts":
		return keyTs
	case "@timestamp":
		return keyAtTimestamp
	case "level":
		return keyLevel
	case "log.level":
		return keyLogLevel
	case "severity":
		return keySeverity
	case "trace_id":
		return keyTraceID
	case "traceId":
		return keyTraceIDCamel
	case "span_id":
		return keySpanID
	case "spanId":
		return keySpanIDCamel
	case "resourceSpans":
		return keyResourceSpans
	}
	return -1
}

// object is the scan result for one line. Its slices are reused from line
// to line, so a Decoder keeps one.
type object struct {
	start, end int // the object's braces, end exclusive
	members    []member
	// superseded marks the members a later member of the same key
	// supersedes: JSON.parse, and so @axiomhq/pino, keeps the last value.
	// It is written only on a line with such a member (see isSuperseded).
	superseded  []bool
	nSuperseded int          // how many are
	known       [numKeys]int // 1 + index in members of the key's last occurrence; 0 if absent
	keys        keySet
	shape       keyShape
}

// isSuperseded reports whether a later member has member i's key.
func (o *object) isSuperseded(i int) bool { return o.nSuperseded > 0 && o.superseded[i] }

// has reports whether key k is present; at returns its last occurrence.
func (o *object) has(k int) bool   { return o.known[k] > 0 }
func (o *object) at(k int) *member { return &o.members[o.known[k]-1] }
func (o *object) val(line []byte, k int) []byte {
	m := o.at(k)
	return line[m.ValStart:m.ValEnd]
}

// scanObject reports whether line (after optional whitespace) is exactly one
// JSON object whose strings are valid UTF-8, filling o (its known keys only
// then).
func scanObject(line []byte, o *object) bool {
	o.nSuperseded = 0
	o.start = jsontext.SkipSpace(line, 0)
	var ok bool
	o.members, o.end, ok = jsontext.Members(line, o.start, o.members[:0])
	if !ok || jsontext.SkipSpace(line, o.end) != len(line) {
		return false
	}
	// Keys compare as JSON.parse sees them: "\u0074ime" is time. A line
	// with the last line's keys has its known keys and no duplicate.
	if o.shape.matches(line, o.members) {
		o.known = o.shape.known
		return true
	}
	o.superseded = o.lookAtKeys(line, o.members, o.superseded[:0])
	return true
}

// lookAtKeys fills o.known and marks superseded members (in a local
// slice, stored once by the caller: a store into o per member costs a write
// barrier while the GC runs). superseded is only written, and so cleared,
// from the line's first duplicate key on (see object.nSuperseded).
func (o *object) lookAtKeys(line []byte, members []member, superseded []bool) []bool {
	// Most lines' keys are few, plain and distinct: plainKeys takes them,
	// and the first key that is escaped, past smallKeys or maybe seen
	// before goes on below.
	o.known = [numKeys]int{}
	n, filter, maybeKnown := plainKeys(line, members)
	for ; maybeKnown != 0; maybeKnown &= maybeKnown - 1 {
		j := bits.TrailingZeros32(maybeKnown)
		m := &members[j]
		if idx := keyIndex(line[m.KeyStart+1 : m.KeyEnd-1]); idx >= 0 {
			o.known[idx] = j + 1
		}
	}
	if n == len(members) {
		o.shape.keep(line, members, &o.known)
		return superseded
	}
	o.keys.reset() // only a line plainKeys did not take whole needs keys
	o.keys.filter = filter
	for ; n < len(members); n++ {
		m := &members[n]
		key, prev := line[m.KeyStart+1:m.KeyEnd-1], -1
		if o.keys.all || m.Escaped || n >= smallKeys {
			if !o.keys.all {
				o.keys.takeOver(members[:n])
			}
			key, prev = o.keys.add(line, m.KeyStart, m.KeyEnd, m.Escaped, n)
		} else if bit := filterBit(key); o.keys.filter&bit == 0 {
			o.keys.filter |= bit
		} else {
			prev = earlierPlain(line, members[:n], key)
		}
		if prev >= 0 {
			if o.nSuperseded == 0 {
				superseded = slices.Grow(superseded[:0], len(members))[:len(members)]
				clear(superseded)
			}
			superseded[prev] = true
			o.nSuperseded++
		}
		if idx := keyIndex(key); idx >= 0 {
			o.known[idx] = n + 1
		}
	}
	return superseded
}

// plainKeys goes through the first of members while their keys are plain
// (not escaped), fewer than smallKeys and distinct, as a 64-bit filter of
// (length, first and last byte) shows. It returns how many it took, their
// filter, and a mask of the members whose key has a known key's bit, to
// look up (keyIndex). It makes no call, so Go keeps its variables in
// registers.
func plainKeys(line []byte, members []member) (n int, filter uint64, maybeKnown uint32) {
	known := knownKeyBits
	for i := range members[:min(len(members), smallKeys)] {
		m := &members[i]
		if m.Escaped {
			return i, filter, maybeKnown
		}
		bit := quotedFilterBit(line, m.KeyStart, m.KeyEnd)
		if filter&bit != 0 {
			return i, filter, maybeKnown
		}
		filter |= bit
		if bit&known != 0 {
			maybeKnown |= 1 << i
		}
	}
	return min(len(members), smallKeys), filter, maybeKnown
}

// keyShape is the keys of the last line whose keys plainKeys took whole
// (plain, distinct, at most smallKeys of them) and none longer than
// maxShapeKey with its quotes, and the known keys lookAtKeys found there.
// A logger writes most of its lines with the same keys in the same order
// (pino: level, time, pid, hostname, its bindings, msg), so a line whose
// keys are those is settled by comparing them, two words each, instead of
// filtering and looking up every key: it has no duplicate and the same
// known keys, at the same members.
type keyShape struct {
	keys  []shapeKey
	known [numKeys]int
}

// maxShapeKey is the longest key (with its quotes) a keyShape holds.
const maxShapeKey = 16

// shapeKey is one key with its quotes, as its first 16 bytes (little-endian
// words) and masks of the bytes that are the key's.
type shapeKey struct {
	lo, hi   uint64
	mlo, mhi uint64
}

// matches reports whether members' keys are s's, in order. The bytes a
// key's masks cover are compared: the same bytes from the line's opening
// quote are the same key, since s's keys hold no quote or backslash before
// their closing quote, which is then the line's key's closing quote too.
func (s *keyShape) matches(line []byte, members []member) bool {
	keys := s.keys
	if len(members) != len(keys) || len(members) == 0 {
		return false
	}
	last := len(line) - 16 // the last key start with 16 bytes of room
	var diff uint64
	for i := range keys {
		k := &keys[i]
		var lo, hi uint64
		if start := members[i].KeyStart; start <= last {
			// As an array, the 16 bytes are two loads after one
			// bounds check.
			b := (*[16]byte)(line[start:])
			lo, hi = binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
		} else {
			lo, hi = key16(line, start)
		}
		diff |= (lo^k.lo)&k.mlo | (hi^k.hi)&k.mhi
	}
	return diff == 0
}

// keep makes members' keys s's, with their known keys, unless one is
// longer than maxShapeKey (then s holds none).
func (s *keyShape) keep(line []byte, members []member, known *[numKeys]int) {
	s.keys = s.keys[:0]
	for i := range members {
		m := &members[i]
		n := m.KeyEnd - m.KeyStart
		if n > maxShapeKey {
			s.keys = s.keys[:0]
			return
		}
		var k shapeKey
		k.mlo, k.mhi = ^uint64(0), ^uint64(0)
		if n < 8 {
			k.mlo, k.mhi = 1<<(8*n)-1, 0
		} else if n < 16 {
			k.mhi = 1<<(8*(n-8)) - 1
		}
		lo, hi := key16(line, m.KeyStart)
		k.lo, k.hi = lo&k.mlo, hi&k.mhi
		s.keys = append(s.keys, k)
	}
	s.known = *known
}

// key16 is the 16 bytes of line from start on as two little-endian words,
// zero past the line's end.
func key16(line []byte, start int) (lo, hi uint64) {
	var b [16]byte
	copy(b[:], line[start:])
	return binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint64(b[8:])
}

// keySet finds a line's duplicate keys: an open-addressing hash table of
// member indexes, reused from line to line (a generation number empties it
// without clearing), so no map is built per line.
type keySet struct {
	// all is set once the line's keys are all recorded in keys (from its
	// first escaped key, or its first key past smallKeys); before, only
	// filter is kept and members locate the (plain) keys.
	all    bool
	slots  []keySlot
	gen    uint32
	n      int
	filter uint64   // (length, first, last byte) of the first smallKeys keys
	keys   []keyRef // each member's key; nk are this line's
	nk     int
	buf    []byte // unescaped keys
}

// keyRef is where a key's text is: line[start:end], or buf[start:end] when
// it was unescaped. Offsets, not slices: storing pointers costs write
// barriers.
type keyRef struct {
	start, end int32
	inBuf      bool
}

func (s *keySet) text(line []byte, r keyRef) []byte {
	if r.inBuf {
		return s.buf[r.start:r.end]
	}
	return line[r.start:r.end]
}

type keySlot struct {
	gen  uint32
	hash uint32
	idx  int32
}

var keySeed = maphash.MakeSeed()

func (s *keySet) reset() {
	s.gen++
	if s.gen == 0 { // wrapped: stale slots could look current
		clear(s.slots)
		s.gen = 1
	}
	s.n, s.filter, s.nk, s.all = 0, 0, 0, false
	if len(s.buf) > 0 {
		s.buf = s.buf[:0]
	}
	if len(s.slots) == 0 {
		s.slots = make([]keySlot, 64)
	}
}

// smallKeys is how many members a line's first keys are checked for
// without hashing: a 64-bit filter of (length, first and last byte) finds
// the rare candidates, which are compared with the earlier keys directly.
// Hashing every key of a typical 10-member line cost a third more time.
const smallKeys = 32

// add records the key at line[keyStart:keyEnd] (with its quotes) as member
// idx's. It returns the key's text and the index of an earlier member with
// the same key, or -1. That member is forgotten: the next duplicate
// supersedes idx.
func (s *keySet) add(line []byte, keyStart, keyEnd int, escaped bool, idx int) ([]byte, int) {
	s.all = true
	ref := keyRef{start: int32(keyStart + 1), end: int32(keyEnd - 1)}
	if escaped {
		start := len(s.buf)
		s.buf, _ = jsontext.AppendString(s.buf, line[keyStart:keyEnd])
		ref = keyRef{start: int32(start), end: int32(len(s.buf)), inBuf: true}
	}
	s.push(ref)
	key := s.text(line, ref)
	if idx < smallKeys {
		if bit := filterBit(key); s.filter&bit == 0 {
			s.filter |= bit
			return key, -1
		}
		for j := idx - 1; j >= 0; j-- {
			if string(s.text(line, s.keys[j])) == string(key) {
				return key, j
			}
		}
		return key, -1
	}
	if idx == smallKeys { // many members: from here on, the hash table
		for j := range smallKeys {
			s.hashed(line, s.text(line, s.keys[j]), j)
		}
	}
	return key, s.hashed(line, key, idx)
}

// takeOver records the keys of members, all plain and already in the
// filter, so that add can go on from them.
func (s *keySet) takeOver(members []member) {
	for _, m := range members {
		s.push(keyRef{start: int32(m.KeyStart + 1), end: int32(m.KeyEnd - 1)})
	}
	s.all = true
}

// push records ref as the next member's key.
func (s *keySet) push(ref keyRef) {
	if s.nk < len(s.keys) { // no store of the slice itself: see keyRef
		s.keys[s.nk] = ref
	} else {
		s.keys = append(s.keys, ref)
	}
	s.nk++
}

// filterBit is key's bit in keySet.filter, from its length and its first
// and last bytes; the empty key's are quotes, as quotedFilterBit reads them.
func filterBit(key []byte) uint64 {
	if len(key) == 0 {
		return filterBitOf(2, '"', '"')
	}
	return filterBitOf(len(key)+2, key[0], key[len(key)-1])
}

// quotedFilterBit is the filterBit of the plain key line[start:end] holds
// within its quotes: line[start+1] and line[end-2] are its first and last
// bytes, or its quotes if it is empty, so it needs no test of its own.
func quotedFilterBit(line []byte, start, end int) uint64 {
	return filterBitOf(end-start, line[start+1], line[end-2])
}

// filterBitOf is the bit of a key of n-2 bytes (n with its quotes).
func filterBitOf(n int, first, last byte) uint64 {
	return uint64(1) << ((uint(n)*7 + uint(first)*3 + uint(last)) % 64)
}

// earlierPlain returns the last of members (all with plain keys) whose key
// is key, or -1: the filter said there may be one.
func earlierPlain(line []byte, members []member, key []byte) int {
	for j := len(members) - 1; j >= 0; j-- {
		if m := &members[j]; string(line[m.KeyStart+1:m.KeyEnd-1]) == string(key) {
			return j
		}
	}
	return -1
}

// hashed is add for the members after the first smallKeys.
func (s *keySet) hashed(line, key []byte, idx int) int {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	h := uint32(maphash.Bytes(keySeed, key))
	mask := uint32(len(s.slots) - 1)
	for p := h & mask; ; p = (p + 1) & mask {
		sl := &s.slots[p]
		if sl.gen != s.gen {
			*sl = keySlot{gen: s.gen, hash: h, idx: int32(idx)}
			s.n++
			return -1
		}
		if sl.hash == h && string(s.text(line, s.keys[sl.idx])) == string(key) {
			prev := int(sl.idx)
			sl.idx = int32(idx)
			return prev
		}
	}
}

// grow doubles the table and re-inserts the current entries.
func (s *keySet) grow() {
	old := s.slots
	s.slots = make([]keySlot, 2*len(old))
	mask := uint32(len(s.slots) - 1)
	for _, sl := range old {
		if sl.gen != s.gen {
			continue
		}
		p := sl.hash & mask
		for s.slots[p].gen == s.gen {
			p = (p + 1) & mask
		}
		s.slots[p] = sl
	}
}
