// Package otlpwire reads and filters OTLP ExportTraceServiceRequest protobuf
// without building pdata, so that spans can be sampled before paying for
// ptrace: most of a received span's cost is building it, and most spans are
// dropped.
//
// Decoding follows pdata's generated unmarshalling rules (wire type checks,
// unknown fields skipped, a later singular field wins, repeated messages
// merged), so whatever pdata accepts is accepted here. Attributes, events
// and the resource are only read when looked up, links and the scope never,
// so malformed data there is found only if a lookup reaches it; what is
// kept of it fails when pdata unmarshals Filter's output.
package otlpwire

import (
	"encoding/binary"
	"slices"
	"sync"
)

// Filter writes req to dst (appending; dst may be nil or a reused buffer)
// keeping only the spans for which keep returns true. before, if not nil, is
// called for every span of the request before the first keep call. keep may
// return extra: already-encoded Span fields appended to the end of that kept
// span's message (a later singular field wins; an attribute replaces every
// attribute of the span with its key, as pcommon.Map's Put* do, though it
// goes last); extra is copied, so its buffer may be reused across calls. ScopeSpans and
// ResourceSpans left with no spans are removed; everything else (resource,
// scope, schema_url, unknown fields) is copied byte for byte. When nothing
// changes (every span kept, no extra, no empty ScopeSpans or ResourceSpans)
// out is req itself; callers treat out as read-only either way.
//
// Returns the new request, how many spans were kept and the total. Malformed
// input, including malformed attributes or events met by a lookup in a
// callback, returns an error, and dst's content is undefined. The *Resource
// and *Span passed to the callbacks are only valid during the call. keep must
// not be nil.
//
// Like pdata, a ResourceSpans' deprecated scope_spans field 1000 is read only
// when it has no field 2; otherwise those ScopeSpans are dropped.
func Filter(dst, req []byte, before func(*Resource, *Span), keep func(*Resource, *Span) (keep bool, extra []byte)) (out []byte, kept, total int, err error) {
	out, _, kept, total, err = FilterAside(dst, nil, req, before, keep, nil)
	return out, kept, total, err
}

// FilterAside is Filter that also writes to aside (appending) the request
// Filter would write keeping only the spans for which setAside returns
// true, without extra, from the same reading of req: setAside is asked
// after the last keep call, for every span in turn, with its ordinal in
// the request (0 for the first). asideOut is nil when no span is set
// aside (or setAside is nil), and may be req itself when every span is.
func FilterAside(dst, aside, req []byte, before func(*Resource, *Span), keep func(*Resource, *Span) (keep bool, extra []byte), setAside func(ordinal int) bool) (out, asideOut []byte, kept, total int, err error) {
	sc := pool.Get().(*scratch)
	defer sc.release()
	if err := sc.parse(req); err != nil {
		return dst, nil, 0, 0, err
	}
	total = len(sc.spans)
	if before != nil {
		for ri := range sc.res {
			r := &sc.res[ri]
			for ci := r.scopes; ci < r.scopesEnd; ci++ {
				c := &sc.scopes[ci]
				for si := c.spans; si < c.spansEnd; si++ {
					s := &sc.spans[si].Span
					before(&r.Resource, s)
					if s.err != nil {
						return dst, nil, 0, 0, s.err
					}
					if r.err != nil {
						return dst, nil, 0, 0, r.err
					}
				}
			}
		}
	}
	changed := false
	for ri := range sc.res {
		r := &sc.res[ri]
		for ci := r.scopes; ci < r.scopesEnd; ci++ {
			c := &sc.scopes[ci]
			for si := c.spans; si < c.spansEnd; si++ {
				s := &sc.spans[si]
				k, extra := keep(&r.Resource, &s.Span)
				if s.err != nil {
					return dst, nil, 0, 0, s.err
				}
				if r.err != nil {
					return dst, nil, 0, 0, r.err
				}
				if !k {
					changed = true
					continue
				}
				s.keep = true
				kept++
				c.kept++
				if len(extra) > 0 {
					changed = true
					s.extraLo = len(sc.extra)
					if s.hasAttrOf(extra) {
						// Rare (spans already sampled upstream): the span is
						// rewritten without the attributes extra replaces.
						sc.extra = appendWithoutAttrsOf(sc.extra, req[s.start:s.end], extra)
						s.rewritten = true
					}
					sc.extra = append(sc.extra, extra...)
					s.extraHi = len(sc.extra)
				}
			}
			if c.kept == 0 {
				changed = true
			} else {
				r.kept++
			}
		}
		if r.kept == 0 {
			changed = true
		}
	}
	out = req
	if changed {
		out = sc.write(dst, req)
	}
	if setAside != nil {
		asideOut = sc.writeAside(aside, req, setAside)
	}
	return out, asideOut, kept, total, nil
}

// writeAside writes req with only the spans setAside names, after write:
// the records' keep flags and counts are set again for them.
func (sc *scratch) writeAside(dst, req []byte, setAside func(ordinal int) bool) []byte {
	changed, any, ordinal := false, false, 0
	for ri := range sc.res {
		r := &sc.res[ri]
		r.kept = 0
		for ci := r.scopes; ci < r.scopesEnd; ci++ {
			c := &sc.scopes[ci]
			c.kept = 0
			for si := c.spans; si < c.spansEnd; si++ {
				s := &sc.spans[si]
				s.keep, s.rewritten, s.extraLo, s.extraHi = setAside(ordinal), false, 0, 0
				ordinal++
				if !s.keep {
					changed = true
					continue
				}
				any = true
				c.kept++
			}
			if c.kept == 0 {
				changed = true
			} else {
				r.kept++
			}
		}
		if r.kept == 0 {
			changed = true
		}
	}
	switch {
	case !any:
		return nil
	case !changed:
		return req
	}
	return sc.write(dst, req)
}

var pool = sync.Pool{New: func() any { return new(scratch) }}

// scratch is where Filter records a request's structure; reused across calls.
type scratch struct {
	res    []resRec
	scopes []scopeRec
	spans  []spanRec
	extra  []byte // the kept spans' extra fields
}

// Offsets are into the request: hdr is where a field's tag starts, start and
// end delimit its message.
type resRec struct {
	Resource
	hdr, start, end   int
	scopes, scopesEnd int // its ScopeSpans in scratch.scopes
	kept, size        int // ScopeSpans kept, message size once filtered
}

type scopeRec struct {
	hdr, start, end int
	num             int32 // 2, or 1000 for deprecated scope_spans
	spans, spansEnd int   // its spans in scratch.spans
	kept, size      int
}

type spanRec struct {
	Span
	hdr, start, end  int
	keep             bool
	rewritten        bool // scratch.extra holds the whole span, not only its extra
	extraLo, extraHi int  // in scratch.extra
}

// body is the size of the kept span's message.
func (s *spanRec) body() int {
	if s.rewritten {
		return s.extraHi - s.extraLo
	}
	return s.end - s.start + s.extraHi - s.extraLo
}

// maxPooled bounds the records a pooled scratch keeps: a rare huge request
// should not pin megabytes.
const maxPooled = 1 << 14

func (sc *scratch) release() {
	if max(cap(sc.res), cap(sc.scopes), cap(sc.spans)) > maxPooled {
		return
	}
	clear(sc.res) // drop references to the request
	clear(sc.spans)
	sc.res, sc.scopes, sc.spans, sc.extra = sc.res[:0], sc.scopes[:0], sc.spans[:0], sc.extra[:0]
	pool.Put(sc)
}

var (
	requestFields       = mask(1)
	resourceSpansFields = mask(1, 2, 3) // and 1000
	scopeSpansFields    = mask(1, 2, 3)
)

// parse records the structure of the ExportTraceServiceRequest req.
func (sc *scratch) parse(req []byte) error {
	for pos := 0; pos < len(req); {
		hdr := pos
		f, npos, err := next(req, pos)
		if err != nil {
			return err
		}
		pos = npos
		if f.tag != 1<<3|wtLen {
			if err := checkKnown("ExportTraceServiceRequest", requestFields, f); err != nil {
				return err
			}
			continue
		}
		if err := sc.parseResourceSpans(req[:f.end], hdr, f.start); err != nil {
			return err
		}
	}
	return nil
}

// parseResourceSpans records the ResourceSpans message b[start:].
func (sc *scratch) parseResourceSpans(b []byte, hdr, start int) error {
	resLo, resHi, scopes := -1, -1, false
	for pos := start; pos < len(b); {
		fhdr := pos
		f, npos, err := next(b, pos)
		if err != nil {
			return err
		}
		pos = npos
		switch f.tag {
		case 1<<3 | wtLen:
			if resLo < 0 {
				resLo = fhdr
			}
			resHi = pos
		case 2<<3 | wtLen:
			scopes = true
		case 3<<3 | wtLen, 1000<<3 | wtLen:
		default:
			if f.num() == 1000 {
				return wrongType("ResourceSpans", f)
			}
			if err := checkKnown("ResourceSpans", resourceSpansFields, f); err != nil {
				return err
			}
		}
	}
	r := resRec{hdr: hdr, start: start, end: len(b), scopes: len(sc.scopes)}
	if resLo >= 0 {
		r.res = b[resLo:resHi]
	}
	for pos := start; pos < len(b); {
		fhdr := pos
		f, npos, _ := next(b, pos) // validated above
		pos = npos
		if f.num() != 2 && f.num() != 1000 {
			continue
		}
		spans := len(sc.spans)
		if err := sc.parseScopeSpans(b[:f.end], fhdr, f.start, f.num()); err != nil {
			return err
		}
		if f.num() == 1000 && scopes {
			// pdata ignores deprecated ScopeSpans beside current ones.
			sc.spans = sc.spans[:spans]
			sc.scopes[len(sc.scopes)-1].spansEnd = spans
		}
	}
	r.scopesEnd = len(sc.scopes)
	sc.res = append(sc.res, r)
	return nil
}

// parseScopeSpans records the ScopeSpans message b[start:] and its spans.
func (sc *scratch) parseScopeSpans(b []byte, hdr, start int, num int32) error {
	c := scopeRec{hdr: hdr, start: start, end: len(b), num: num, spans: len(sc.spans)}
	for pos := start; pos < len(b); {
		fhdr := pos
		f, npos, err := next(b, pos)
		if err != nil {
			return err
		}
		pos = npos
		switch f.tag {
		case 2<<3 | wtLen:
			sc.spans = append(sc.spans, spanRec{hdr: fhdr, start: f.start, end: f.end})
			if err := sc.spans[len(sc.spans)-1].parse(b[f.start:f.end]); err != nil {
				return err
			}
		case 1<<3 | wtLen, 3<<3 | wtLen:
		default:
			if err := checkKnown("ScopeSpans", scopeSpansFields, f); err != nil {
				return err
			}
		}
	}
	c.spansEnd = len(sc.spans)
	sc.scopes = append(sc.scopes, c)
	return nil
}

// write appends req with the decisions applied to dst.
func (sc *scratch) write(dst, req []byte) []byte {
	size := len(req)
	for ri := range sc.res {
		r := &sc.res[ri]
		r.size = r.end - r.start
		for ci := r.scopes; ci < r.scopesEnd; ci++ {
			c := &sc.scopes[ci]
			c.size = c.end - c.start
			for si := c.spans; si < c.spansEnd; si++ {
				s := &sc.spans[si]
				c.size -= s.end - s.hdr
				if s.keep {
					c.size += lenField(2, s.body())
				}
			}
			r.size -= c.end - c.hdr
			if c.kept > 0 {
				r.size += lenField(c.num, c.size)
			}
		}
		size -= r.end - r.hdr
		if r.kept > 0 {
			size += lenField(1, r.size)
		}
	}

	out := slices.Grow(dst, size)
	prev := 0
	for ri := range sc.res {
		r := &sc.res[ri]
		out = append(out, req[prev:r.hdr]...)
		prev = r.end
		if r.kept == 0 {
			continue
		}
		out = appendLen(out, 1, r.size)
		rpos := r.start
		for ci := r.scopes; ci < r.scopesEnd; ci++ {
			c := &sc.scopes[ci]
			out = append(out, req[rpos:c.hdr]...)
			rpos = c.end
			if c.kept == 0 {
				continue
			}
			out = appendLen(out, c.num, c.size)
			cpos := c.start
			for si := c.spans; si < c.spansEnd; si++ {
				s := &sc.spans[si]
				out = append(out, req[cpos:s.hdr]...)
				cpos = s.end
				if !s.keep {
					continue
				}
				out = appendLen(out, 2, s.body())
				if !s.rewritten {
					out = append(out, req[s.start:s.end]...)
				}
				out = append(out, sc.extra[s.extraLo:s.extraHi]...)
			}
			out = append(out, req[cpos:c.end]...)
		}
		out = append(out, req[rpos:r.end]...)
	}
	return append(out, req[prev:]...)
}

// lenField is the encoded size of a length-delimited field num of n bytes.
func lenField(num int32, n int) int {
	return sov(uint64(num)<<3|wtLen) + sov(uint64(n)) + n
}

func appendLen(b []byte, num int32, n int) []byte {
	return binary.AppendUvarint(appendTag(b, num, wtLen), uint64(n))
}
