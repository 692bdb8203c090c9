package otlpwire

// Resource is a ResourceSpans' resource.
type Resource struct {
	// res spans the ResourceSpans' resource fields (pdata merges repeated
	// ones), nil if there are none.
	res []byte
	err error // first malformation found by a lazy lookup
}

// Attr returns the value of the first attribute with key, like pcommon.Map.Get.
func (r *Resource) Attr(key string) (Value, bool) {
	for pos := 0; pos < len(r.res); {
		f, npos, _ := next(r.res, pos) // validated by parse
		pos = npos
		if f.num() != 1 { // the Resource fields
			continue
		}
		v, ok, err := findAttr(r.res[f.start:f.end], "Resource", 1, key)
		if err != nil {
			if r.err == nil {
				r.err = err
			}
			return Value{}, false
		}
		if ok {
			return v, true
		}
	}
	return Value{}, false
}

// Span is one span's fields; fixed fields are decoded once, attributes and
// events looked up on demand.
type Span struct {
	traceID      [16]byte
	spanID       [8]byte
	parentSpanID [8]byte
	traceState   string
	name         string
	kind         int32
	status       int32
	start, end   uint64
	// attrs and events span the span's attribute and event fields, nil if none.
	attrs, events []byte
	err           error // first malformation found by a lazy lookup
}

// TraceID returns the trace id, zero if absent.
func (s *Span) TraceID() [16]byte { return s.traceID }

// SpanID returns the span id, zero if absent.
func (s *Span) SpanID() [8]byte { return s.spanID }

// ParentSpanID returns the parent span id, zero if absent.
func (s *Span) ParentSpanID() [8]byte { return s.parentSpanID }

// TraceState returns the W3C tracestate, a view into the request.
func (s *Span) TraceState() string { return s.traceState }

// Name returns the span name, a view into the request.
func (s *Span) Name() string { return s.name }

// Kind returns the span kind in ptrace.SpanKind numbering.
func (s *Span) Kind() int32 { return s.kind }

// StartTime returns the start time in Unix nanoseconds.
func (s *Span) StartTime() uint64 { return s.start }

// EndTime returns the end time in Unix nanoseconds.
func (s *Span) EndTime() uint64 { return s.end }

// StatusCode returns the status code in ptrace.StatusCode numbering.
func (s *Span) StatusCode() int32 { return s.status }

// Attr returns the value of the first attribute with key, like pcommon.Map.Get.
func (s *Span) Attr(key string) (Value, bool) {
	v, ok, err := findAttr(s.attrs, "Span", 9, key)
	if err != nil && s.err == nil {
		s.err = err
	}
	return v, ok
}

// AttrsOf looks up several keys in one pass over the attributes, which costs
// about what one Attr does: for each keys[i] present (the first attribute
// with it, as Attr finds), bit i of found is set and vals[i] holds its value.
// keys must be distinct, at most 64, and vals at least as long.
func (s *Span) AttrsOf(keys []string, vals []Value) (found uint64) {
	b := s.attrs
	var lens uint64 // bit n: some key is n bytes long (n < 64), to skip others cheaply
	for _, k := range keys {
		lens |= 1 << min(len(k), 63)
	}
	for pos := 0; pos < len(b); {
		f, npos, err := next(b, pos)
		if err != nil {
			s.fail(err)
			return found
		}
		pos = npos
		if f.tag != 9<<3|wtLen {
			if err := checkKnown("Span", 1<<9, f); err != nil {
				s.fail(err)
				return found
			}
			continue
		}
		kv := b[f.start:f.end]
		key := kvKey(kv)
		if lens&(1<<min(len(key), 63)) == 0 {
			continue
		}
		for i, k := range keys {
			if string(key) != k || found&(1<<i) != 0 {
				continue
			}
			v, ok, err := lookupKV(kv, k)
			if err != nil {
				s.fail(err)
				return found
			}
			if ok {
				vals[i], found = v, found|1<<i
			}
			break
		}
	}
	return found
}

func (s *Span) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// HasEvent reports whether the span has an event called name.
func (s *Span) HasEvent(name string) bool {
	for pos := 0; pos < len(s.events); {
		f, npos, _ := next(s.events, pos) // validated by parse
		pos = npos
		if f.num() != 11 {
			continue
		}
		ok, err := eventNamed(s.events[f.start:f.end], name)
		if err != nil {
			if s.err == nil {
				s.err = err
			}
			return false
		}
		if ok {
			return true
		}
	}
	return false
}

var (
	eventFields  = mask(1, 2, 3, 4)
	spanFields   = mask(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
	statusFields = mask(2, 3)
)

func eventNamed(ev []byte, name string) (bool, error) {
	var n []byte
	for pos := 0; pos < len(ev); {
		f, npos, err := next(ev, pos)
		if err != nil {
			return false, err
		}
		pos = npos
		switch f.tag {
		case 2<<3 | wtLen:
			n = ev[f.start:f.end] // the last name wins
		case 1<<3 | wtI64, 3<<3 | wtLen, 4<<3 | wtVarint:
		default:
			if err := checkKnown("Event", eventFields, f); err != nil {
				return false, err
			}
		}
	}
	return string(n) == name, nil
}

// findAttr returns the value of the first KeyValue field num of message b with key.
func findAttr(b []byte, msg string, num int32, key string) (Value, bool, error) {
	for pos := 0; pos < len(b); {
		f, npos, err := next(b, pos)
		if err != nil {
			return Value{}, false, err
		}
		pos = npos
		if f.tag != uint64(num)<<3|wtLen {
			if err := checkKnown(msg, 1<<num, f); err != nil {
				return Value{}, false, err
			}
			continue
		}
		v, ok, err := lookupKV(b[f.start:f.end], key)
		if err != nil || ok {
			return v, ok, err
		}
	}
	return Value{}, false, nil
}

// parse decodes the Span message b, checking what pdata checks of its fields
// except attributes, events and links, which are looked at lazily.
func (s *Span) parse(b []byte) error {
	*s = Span{}
	attrLo, evLo := -1, -1
	for pos := 0; pos < len(b); {
		hdr := pos
		f, npos, err := next(b, pos)
		if err != nil {
			return err
		}
		pos = npos
		switch f.tag {
		case 1<<3 | wtLen:
			err = id(s.traceID[:], b[f.start:f.end])
		case 2<<3 | wtLen:
			err = id(s.spanID[:], b[f.start:f.end])
		case 4<<3 | wtLen:
			err = id(s.parentSpanID[:], b[f.start:f.end])
		case 3<<3 | wtLen:
			s.traceState = view(b[f.start:f.end])
		case 5<<3 | wtLen:
			s.name = view(b[f.start:f.end])
		case 6<<3 | wtVarint:
			s.kind = int32(f.val)
		case 7<<3 | wtI64:
			s.start = f.val
		case 8<<3 | wtI64:
			s.end = f.val
		case 9<<3 | wtLen:
			if attrLo < 0 {
				attrLo = hdr
			}
			s.attrs = b[attrLo:pos]
		case 11<<3 | wtLen:
			if evLo < 0 {
				evLo = hdr
			}
			s.events = b[evLo:pos]
		case 15<<3 | wtLen:
			err = s.mergeStatus(b[f.start:f.end])
		case 10<<3 | wtVarint, 12<<3 | wtVarint, 13<<3 | wtLen, 14<<3 | wtVarint, 16<<3 | wtI32:
		default:
			err = checkKnown("Span", spanFields, f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// id sets dst from an id field: pdata accepts the full size or nothing.
func id(dst, b []byte) error {
	switch len(b) {
	case 0:
		clear(dst)
	case len(dst):
		copy(dst, b)
	default:
		return errIDLength
	}
	return nil
}

// mergeStatus reads a Status message; pdata merges repeated ones.
func (s *Span) mergeStatus(b []byte) error {
	for pos := 0; pos < len(b); {
		f, npos, err := next(b, pos)
		if err != nil {
			return err
		}
		pos = npos
		switch f.tag {
		case 3<<3 | wtVarint:
			s.status = int32(f.val)
		case 2<<3 | wtLen:
		default:
			err = checkKnown("Status", statusFields, f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
