package decode

import "github.com/sidecarhq/sidecar/internal/jsontext"

// A validating scan of one JSON object per line, built on jsontext. It walks
// the line once, checks that it is exactly one well-formed JSON object, and
// records where the few top-level members the decoder cares about sit, so the
// body can be produced by splicing the original bytes: no map, no pcommon.Map.

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
	i := jsontext.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	o.start = i
	i = jsontext.SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		o.empty = true
		o.end = i + 1
		return jsontext.SkipSpace(line, o.end) == len(line)
	}
	prevComma := -1 // index of the comma before the current member
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
		idx := -1
		if !escaped {
			idx = keyIndex(line[keyStart+1 : keyEnd-1])
		}
		i = jsontext.SkipSpace(line, valEnd)
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
				m.cutStart, m.cutEnd = keyStart, jsontext.SkipSpace(line, i+1)
			}
			prevComma = i
			i = jsontext.SkipSpace(line, i+1)
		case '}':
			if m != nil {
				if prevComma >= 0 { // last member: remove the comma before it
					m.cutStart, m.cutEnd = prevComma, valEnd
				} else { // only member
					m.cutStart, m.cutEnd = keyStart, valEnd
				}
			}
			o.end = i + 1
			return jsontext.SkipSpace(line, o.end) == len(line)
		default:
			return false
		}
	}
}
