package decode

import (
	"hash/maphash"

	"github.com/sidecarhq/sidecar/internal/jsontext"
)

// A validating scan of one JSON object per line, built on jsontext. It walks
// the line once, checks that it is exactly one well-formed JSON object, and
// records where each top-level member sits and which ones a later member of
// the same key supersedes, so the body can be produced by splicing the
// original bytes: no map, no pcommon.Map.

// member locates one top-level "key": value pair in the line.
type member struct {
	keyStart int // index of the key's opening quote
	valStart int // index of the value's first byte
	valEnd   int // index just past the value
	sep      int // index of the comma before the member, -1 for the first
	// superseded is set when a later member has the same key: JSON.parse,
	// and so @axiomhq/pino, keeps the last value.
	superseded bool
}

// Keys the decoder looks at; object.known holds the last occurrence of each.
const (
	keyUnderscoreTime = iota // _time
	keyTime                  // time (pino, bunyan, logrus, slog)
	keyTimestamp             // timestamp (winston)
	keyTs                    // ts (zap)
	keyAtTimestamp           // @timestamp (ECS)
	keyLevel                 // level
	keyLogLevel              // log.level (ECS)
	keyTraceID               // trace_id
	keyTraceIDCamel          // traceId
	keySpanID                // span_id
	keySpanIDCamel           // spanId
	keyResourceSpans         // resourceSpans (OTLP/JSON traces)
	numKeys
)

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
	known      [numKeys]int // 1 + index in members of the key's last occurrence; 0 if absent
	superseded int          // how many members are superseded
	keys       keySet
}

// has reports whether key k is present; at returns its last occurrence.
func (o *object) has(k int) bool   { return o.known[k] > 0 }
func (o *object) at(k int) *member { return &o.members[o.known[k]-1] }
func (o *object) val(line []byte, k int) []byte {
	m := o.at(k)
	return line[m.valStart:m.valEnd]
}

// scanObject reports whether line (after optional whitespace) is exactly one
// JSON object, filling o. line must be valid UTF-8.
func scanObject(line []byte, o *object) bool {
	o.members, o.known, o.superseded = o.members[:0], [numKeys]int{}, 0
	o.keys.reset()
	i := jsontext.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	o.start = i
	i = jsontext.SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		o.end = i + 1
		return jsontext.SkipSpace(line, o.end) == len(line)
	}
	sep := -1
	for {
		if i >= len(line) || line[i] != '"' {
			return false
		}
		keyStart := i
		keyEnd, escaped, ok := jsontext.StringEnd(line, i)
		if !ok {
			return false
		}
		i = jsontext.SkipSpace(line, keyEnd)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		valStart := jsontext.SkipSpace(line, i+1)
		valEnd, ok := jsontext.ValueEnd(line, valStart)
		if !ok {
			return false
		}
		key := line[keyStart+1 : keyEnd-1]
		if escaped { // compared as JSON.parse sees it: "\u0074ime" is time
			key = o.keys.unescape(line[keyStart:keyEnd])
		}
		n := len(o.members)
		o.members = append(o.members, member{keyStart: keyStart, valStart: valStart, valEnd: valEnd, sep: sep})
		if prev := o.keys.add(key, n); prev >= 0 {
			o.members[prev].superseded = true
			o.superseded++
		}
		if idx := keyIndex(key); idx >= 0 {
			o.known[idx] = n + 1
		}
		i = jsontext.SkipSpace(line, valEnd)
		if i >= len(line) {
			return false
		}
		switch line[i] {
		case ',':
			sep = i
			i = jsontext.SkipSpace(line, i+1)
		case '}':
			o.end = i + 1
			return jsontext.SkipSpace(line, o.end) == len(line)
		default:
			return false
		}
	}
}

// keySet finds a line's duplicate keys: an open-addressing hash table of
// member indexes, reused from line to line (a generation number empties it
// without clearing), so no map is built per line.
type keySet struct {
	slots []keySlot
	gen   uint32
	n     int
	keys  [][]byte // each member's key: a slice of the line, or of buf when escaped
	buf   []byte   // unescaped keys
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
	s.n, s.keys, s.buf = 0, s.keys[:0], s.buf[:0]
	if len(s.slots) == 0 {
		s.slots = make([]keySlot, 64)
	}
}

func (s *keySet) unescape(raw []byte) []byte {
	start := len(s.buf)
	s.buf, _ = jsontext.AppendString(s.buf, raw)
	return s.buf[start:len(s.buf):len(s.buf)]
}

// add records key as member idx's and returns the index of an earlier
// member with the same key, or -1. That member is forgotten: the next
// duplicate supersedes idx.
func (s *keySet) add(key []byte, idx int) int {
	s.keys = append(s.keys, key)
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
		if sl.hash == h && string(s.keys[sl.idx]) == string(key) {
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
