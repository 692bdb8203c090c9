package decode

import "encoding/binary"

// A hand-written, validating scanner for one JSON object per line. It walks
// the line once, checks that it is exactly one well-formed JSON object, and
// records where the few top-level members the decoder cares about sit, so the
// body can be produced by splicing the original bytes: no map, no pcommon.Map.

// maxDepth bounds nesting so a hostile line cannot exhaust the stack; Axiom
// itself cuts nesting deeper than 100 levels.
const maxDepth = 128

// member locates one top-level "key": value pair in the line.
type member struct {
	found    bool
	keyStart int // index of the key's opening quote
	valStart int // index of the value's first byte
	valEnd   int // index just past the value
	// cutStart/cutEnd is the range to delete to remove the member together
	// with one adjacent comma, keeping the object valid.
	cutStart, cutEnd int
}

// Keys the decoder looks at. Only the first occurrence of each counts.
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

// object is the scan result for one line.
type object struct {
	start, end int // the object's braces, end exclusive
	empty      bool
	members    [numKeys]member
}

// scanObject reports whether line (after optional whitespace) is exactly one
// JSON object, filling o. line must be valid UTF-8.
func scanObject(line []byte, o *object) bool {
	*o = object{}
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	o.start = i
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		o.empty = true
		o.end = i + 1
		return skipSpace(line, o.end) == len(line)
	}
	prevComma := -1 // index of the comma before the current member
	for {
		if i >= len(line) || line[i] != '"' {
			return false
		}
		keyStart := i
		keyEnd, escaped, ok := scanString(line, i)
		if !ok {
			return false
		}
		i = skipSpace(line, keyEnd)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		valStart := skipSpace(line, i+1)
		valEnd, ok := skipValue(line, valStart, 1)
		if !ok {
			return false
		}
		idx := -1
		if !escaped {
			idx = keyIndex(line[keyStart+1 : keyEnd-1])
		}
		i = skipSpace(line, valEnd)
		if i >= len(line) {
			return false
		}
		var m *member
		if idx >= 0 && !o.members[idx].found {
			m = &o.members[idx]
			*m = member{found: true, keyStart: keyStart, valStart: valStart, valEnd: valEnd}
		}
		switch line[i] {
		case ',':
			if m != nil { // remove through the following comma
				m.cutStart, m.cutEnd = keyStart, skipSpace(line, i+1)
			}
			prevComma = i
			i = skipSpace(line, i+1)
		case '}':
			if m != nil {
				if prevComma >= 0 { // last member: remove the comma before it
					m.cutStart, m.cutEnd = prevComma, valEnd
				} else { // only member
					m.cutStart, m.cutEnd = keyStart, valEnd
				}
			}
			o.end = i + 1
			return skipSpace(line, o.end) == len(line)
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// plainByte marks the bytes a JSON string can hold without a closer look:
// not a quote, not a backslash, not a control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString validates the string starting at b[i] == '"' and returns the
// index after its closing quote and whether it contains escapes.
func scanString(b []byte, i int) (end int, escaped, ok bool) {
	i++
	for {
		i = skipPlain(b, i)
		if i >= len(b) {
			return 0, false, false
		}
		switch b[i] {
		case '"':
			return i + 1, escaped, true
		case '\\':
			escaped = true
			i++
			if i >= len(b) {
				return 0, false, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+4 >= len(b) {
					return 0, false, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return 0, false, false
					}
				}
				i += 5
			default:
				return 0, false, false
			}
		default: // a control character
			return 0, false, false
		}
	}
}

// skipPlain returns the index of the first byte from i on that is not
// plainByte. It tests eight bytes at a time (strings are most of a line):
// a word is skipped whole when none of its bytes is '"', '\\' or < 0x20.
func skipPlain(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		quote := x ^ ('"' * ones)
		slash := x ^ ('\\' * ones)
		special := (quote-ones)&^quote | (slash-ones)&^slash | (x-0x20*ones)&^x
		if special&highs != 0 {
			break
		}
	}
	for i < len(b) && plainByte[b[i]] {
		i++
	}
	return i
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skipValue validates the value starting at b[i] and returns the index after it.
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		end, _, ok := scanString(b, i)
		return end, ok
	case c == '{':
		return skipContainer(b, i, depth, '}')
	case c == '[':
		return skipContainer(b, i, depth, ']')
	case c == '-' || '0' <= c && c <= '9':
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	}
	return 0, false
}

func skipLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// skipContainer validates an object (close == '}') or array (close == ']').
func skipContainer(b []byte, i, depth int, close byte) (int, bool) {
	if depth >= maxDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == close {
		return i + 1, true
	}
	for {
		if close == '}' {
			if i >= len(b) || b[i] != '"' {
				return 0, false
			}
			end, _, ok := scanString(b, i)
			if !ok {
				return 0, false
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return 0, false
			}
			i = skipSpace(b, i+1)
		}
		end, ok := skipValue(b, i, depth+1)
		if !ok {
			return 0, false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case close:
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// skipNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
