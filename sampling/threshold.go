package sampling

import (
	"encoding/binary"
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Thresholds and randomness follow the OpenTelemetry consistent probability
// sampling spec (tracestate-probability-sampling.md): 56-bit values, keep iff
// R >= T, T = (1-p)·2^56, adjusted count 2^56/(2^56-T).
const (
	maxThreshold = uint64(1) << 56 // the threshold that would reject everything
	randomMask   = maxThreshold - 1
	thPrecision  = 4 // significant hex digits after leading 'f's, as the spec recommends
)

// probabilityToThreshold rounds T=(1-p)·2^56 to thPrecision significant hex
// digits (exact for powers of two), so that the weight written on a span is
// the one implied by the th value it carries.
func probabilityToThreshold(p float64) uint64 {
	if p >= 1 {
		return 0
	}
	t := maxThreshold - uint64(math.Round(p*float64(maxThreshold)))
	digits := thPrecision
	for shift := 52; shift >= 0 && (t>>uint(shift))&0xf == 0xf; shift -= 4 {
		digits++ // leading f's do not count as precision
	}
	if digits >= 14 {
		return t
	}
	drop := uint(56 - 4*digits)
	r := (t + (uint64(1) << (drop - 1))) >> drop << drop
	if r >= maxThreshold {
		r = t >> drop << drop
	}
	return r
}

// pow2Threshold is the threshold of probability 2^-k.
func pow2Threshold(k int) uint64 { return maxThreshold - maxThreshold>>uint(k) }

// adjustedCount is the weight of an item kept at threshold t.
func adjustedCount(t uint64) float64 { return float64(maxThreshold) / float64(maxThreshold-t) }

// encodeThreshold renders t as an OTel th value: 14 hex digits with trailing
// zeros removed, "0" for probability 1.
func encodeThreshold(t uint64) string {
	if t == 0 {
		return "0"
	}
	const hexdigits = "0123456789abcdef"
	var b [14]byte
	for i := 13; i >= 0; i-- {
		b[i] = hexdigits[t&0xf]
		t >>= 4
	}
	n := 14
	for n > 1 && b[n-1] == '0' {
		n--
	}
	return string(b[:n])
}

// traceRandomness is R from the low 56 bits of the trace id.
func traceRandomness(id pcommon.TraceID) uint64 {
	return binary.BigEndian.Uint64(id[8:]) & randomMask
}

// otState is what this processor reads from a tracestate header.
type otState struct {
	th, rv       uint64
	hasTh, hasRv bool
}

// parseTraceState finds the `ot` member of a W3C tracestate and reads its
// th and rv sub-keys. Malformed values are ignored (treated as absent).
func parseTraceState(ts string) otState {
	var st otState
	ot, ok := otMember(ts)
	if !ok {
		return st
	}
	for ot != "" {
		var kv string
		kv, ot, _ = strings.Cut(ot, ";")
		switch {
		case strings.HasPrefix(kv, "th:"):
			st.th, st.hasTh = parseHex56(kv[3:], false)
		case strings.HasPrefix(kv, "rv:"):
			st.rv, st.hasRv = parseHex56(kv[3:], true)
		}
	}
	return st
}

// otMember returns the value of the `ot` list member of tracestate ts.
func otMember(ts string) (string, bool) {
	for ts != "" {
		var m string
		m, ts, _ = strings.Cut(ts, ",")
		m = strings.Trim(m, " \t")
		if v, ok := strings.CutPrefix(m, "ot="); ok {
			return v, true
		}
	}
	return "", false
}

// parseHex56 reads 1-14 lowercase hex digits right-padded to 56 bits; rv
// values must have exactly 14.
func parseHex56(s string, exact bool) (uint64, bool) {
	if len(s) == 0 || len(s) > 14 || (exact && len(s) != 14) {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v << (4 * uint(14-len(s))), true
}

// withThreshold returns tracestate ts with the `ot` member's th set to th
// (already encoded). Other ot sub-keys and other members are kept; the
// modified member moves to the front, as W3C trace context requires. A
// missing or empty tracestate gets "ot=th:<th>".
func withThreshold(ts, th string) string {
	if ts == "" {
		return "ot=th:" + th
	}
	return rewriteOT(ts, "th:"+th)
}

// withoutThreshold returns tracestate ts with the `ot` member's th removed,
// as the spec asks of a stage that finds an incoming th inconsistent with
// the randomness (or cannot state the probability it kept a span with).
// Other sub-keys stay, their member moving to the front; an `ot` member left
// empty goes.
func withoutThreshold(ts string) string { return rewriteOT(ts, "") }

// rewriteOT returns ts with the `ot` member's th replaced by first (a
// "th:<value>" sub-key, or nothing), that member first.
func rewriteOT(ts, first string) string {
	var b strings.Builder
	b.Grow(len(ts) + len(first) + 4)
	b.WriteString("ot=")
	b.WriteString(first)
	subKeys := first != ""
	if ot, ok := otMember(ts); ok {
		for ot != "" {
			var kv string
			kv, ot, _ = strings.Cut(ot, ";")
			if strings.HasPrefix(kv, "th:") || !strings.Contains(kv, ":") || strings.ContainsAny(kv, " \t") {
				continue // the old th, or not a sub-key: dropped
			}
			if subKeys {
				b.WriteByte(';')
			}
			b.WriteString(kv)
			subKeys = true
		}
	}
	if !subKeys {
		b.Reset() // an empty ot member goes
	}
	for ts != "" {
		var m string
		m, ts, _ = strings.Cut(ts, ",")
		m = strings.Trim(m, " \t")
		if m == "" || strings.HasPrefix(m, "ot=") {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m)
	}
	return b.String()
}
