package jsontext

import (
	"math/bits"
	"unicode/utf8"
)

// ValueEnd validates the value starting at s[i] (no leading whitespace) and
// returns the index just past it.
func ValueEnd[T Text](s T, i int) (int, bool) {
	var w walker
	return walk(s, i, &w)
}

// Member locates one member `"key": value` of an object in its text.
type Member struct {
	KeyStart, KeyEnd int  // the key's opening quote, and just past its closing one
	ValStart, ValEnd int  // the value, without whitespace
	Escaped          bool // the key holds escape sequences
}

// Members validates the object starting at s[i] == '{' (no leading
// whitespace) and returns its members in order, in dst's memory when it has
// room, and the index just past the object. Nested containers count towards
// MaxDepth with the object itself. Unlike ValueEnd, it also rejects strings
// that are not valid UTF-8, so that a caller need not check the text first.
func Members[T Text](s T, i int, dst []Member) ([]Member, int, bool) {
	if i >= len(s) || s[i] != '{' {
		return dst[:0], 0, false
	}
	w := walker{members: dst[:cap(dst)], record: true}
	end, ok := walk(s, i, &w)
	if ok && w.n > len(w.members) { // once more, with room for them all
		w = walker{members: make([]Member, w.n), record: true}
		end, ok = walk(s, i, &w)
	}
	return w.members[:min(w.n, len(w.members))], end, ok
}

// walk validates the value at s[i] and returns the index just past it; with
// w.record set it is an object whose members it records in w.
//
// It is one loop over the bytes, not a function per token: containers are
// tracked by a depth and a bit per level (is it an object), strings and
// numbers are scanned in place. A log line has a few dozen tokens, and Go
// saves and reloads the scanner's state around every call, which cost more
// than the scanning itself; for the same reason members are written into
// the room there is (growing a slice is a call), and counted. The gotos are
// the grammar's states. The position is compared with the length unsigned
// before a byte is read: that also says it is not negative, so the compiler
// drops its own index check.
func walk[T Text](s T, i int, w *walker) (int, bool) {
	var keyEnd int      // where the last key ended, at its colon
	last8 := len(s) - 8 // the last start of eight bytes: computed once, not at every word
	// The enclosing level a ValueEnd value is a member of counts: see MaxDepth.
	w.maxOpen, w.recordDepth = MaxDepth-1, 0
	if w.record {
		w.maxOpen, w.recordDepth = MaxDepth, 1
	}

value: // a value starts at s[i]
	if uint(i) >= uint(len(s)) {
		return 0, false
	}
	switch c := s[i]; {
	case c == '"':
		goto str
	case c == '{' || c == '[':
		goto open
	case c-'0' < 10 || c == '-':
		goto number
	case c == 't':
		if !hasLiteral(s, i, "true") {
			return 0, false
		}
		i += len("true")
	case c == 'f':
		if !hasLiteral(s, i, "false") {
			return 0, false
		}
		i += len("false")
	case c == 'n':
		if !hasLiteral(s, i, "null") {
			return 0, false
		}
		i += len("null")
	case w.depth > 0 && isSpace(c): // whitespace is looked for only where a token is not
		i = SkipSpace(s, i)
		if k := uint(w.n - 1); w.depth == w.recordDepth && k < uint(len(w.members)) {
			w.members[k].ValStart = i
		}
		goto value
	default:
		return 0, false
	}
	goto valueEnd

str: // s[i] == '"' opens a string
	i++
strRest: // the string goes on at s[i]
	if i < 0 { // never (i is past a quote), but it lets the compiler drop the loads' bounds checks
		return 0, false
	}
	// Eight bytes at a time: strings are most of a log line.
	for i <= last8 {
		if stop := stopBytes(load64(s, i)); stop != 0 {
			i += bits.TrailingZeros64(stop) / 8
			goto look
		}
		i += 8
	}
	for i < len(s) && plainASCII[s[i]] {
		i++
	}
	if uint(i) >= uint(len(s)) {
		return 0, false
	}
look: // s[i] ends a run of plain bytes in a string
	switch s[i] {
	case '"':
		i++
		if w.inKey {
			goto colon
		}
		goto valueEnd
	case '\\':
		w.escaped = true
		if i+1 >= len(s) {
			return 0, false
		}
		switch s[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(s) || !hexDigit[s[i+2]] || !hexDigit[s[i+3]] || !hexDigit[s[i+4]] || !hexDigit[s[i+5]] {
				return 0, false
			}
			i += 6
		default:
			return 0, false
		}
	default:
		if s[i] < 0x20 { // a control character
			return 0, false
		}
		if !w.record {
			i++
			goto strRest
		}
		// Members checks UTF-8 (RFC 3629) here, where it stops anyway:
		// a lead byte, then continuation bytes, the first of them in a
		// narrower range where that excludes overlong forms, surrogates
		// and code points past U+10FFFF.
		c, lo, hi, n := s[i], byte(0x80), byte(0xBF), 0
		switch {
		case 0xC2 <= c && c <= 0xDF:
			n = 1
		case 0xE0 <= c && c <= 0xEF:
			n = 2
			if c == 0xE0 {
				lo = 0xA0
			} else if c == 0xED {
				hi = 0x9F
			}
		case 0xF0 <= c && c <= 0xF4:
			n = 3
			if c == 0xF0 {
				lo = 0x90
			} else if c == 0xF4 {
				hi = 0x8F
			}
		default:
			return 0, false
		}
		if i+n >= len(s) || s[i+1] < lo || s[i+1] > hi {
			return 0, false
		}
		for k := 2; k <= n; k++ {
			if s[i+k]&0xC0 != 0x80 {
				return 0, false
			}
		}
		i += n + 1
	}
	goto strRest

number: // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, s[i] is '-' or a digit
	if s[i] == '-' {
		if i++; uint(i) >= uint(len(s)) || s[i]-'0' >= 10 {
			return 0, false
		}
	}
	if s[i] == '0' {
		i++
	} else {
		i++
		// Eight digits at a time: a millisecond timestamp has thirteen.
		for i <= last8 {
			if other := nonDigits(load64(s, i)); other != 0 {
				i += bits.TrailingZeros64(other) / 8
				goto fraction
			}
			i += 8
		}
		i = digitsEnd(s, i)
	}
fraction:
	if uint(i) < uint(len(s)) && s[i] == '.' {
		digits := i + 1
		if i = digitsEnd(s, digits); i == digits {
			return 0, false
		}
	}
	if uint(i) < uint(len(s)) && s[i]|0x20 == 'e' {
		digits := i + 1
		if digits < len(s) && (s[digits] == '+' || s[digits] == '-') {
			digits++
		}
		if i = digitsEnd(s, digits); i == digits {
			return 0, false
		}
	}
	goto valueEnd

colon: // a key ended before s[i]
	w.inKey = false
keyEnd: // a key ended before s[i], and w.inKey is false
	keyEnd = i
	if uint(i) >= uint(len(s)) || s[i] != ':' {
		if i = SkipSpace(s, i); uint(i) >= uint(len(s)) || s[i] != ':' {
			return 0, false
		}
	}
	i++
afterColon: // a key ended at keyEnd, and its colon before s[i]
	if w.depth == w.recordDepth {
		w.member(keyEnd, i) // its ValStart moves on past whitespace at value
	}
	goto value

open: // s[i] opens a container
	if w.depth == w.maxOpen {
		return 0, false
	}
	w.push(s[i] == '{')
	i = SkipSpace(s, i+1)
	if uint(i) < uint(len(s)) && s[i] == w.closer() {
		i++
		goto closed
	}

member: // a member or element of the innermost container starts at s[i]
	if !w.inObject {
		goto value
	}
	if uint(i) < uint(len(s)) && s[i] == '"' {
		w.start, w.escaped = i, false
		i++
		// A key of up to seven plain bytes (most keys) ends in the first
		// eight bytes, tested here without the string loop's flag; other
		// keys, and keys too near the end of the text, go its way.
		if i <= last8 {
			x := load64(s, i)
			if stop := stopBytes(x); stop != 0 {
				at := bits.TrailingZeros64(stop) &^ 7
				if uint16(x>>at) == '"'|':'<<8 { // and the colon (never at byte 7: the shift leaves zeros)
					keyEnd = i + at/8 + 1
					i = keyEnd + 1
					goto afterColon
				}
				i += at / 8
				if byte(x>>at) == '"' {
					i++
					goto keyEnd
				}
				w.inKey = true
				goto look
			}
			i += 8
		}
		w.inKey = true
		goto strRest
	}
	if uint(i) < uint(len(s)) && isSpace(s[i]) {
		i = SkipSpace(s, i)
		goto member
	}
	return 0, false

valueEnd: // a value ended before s[i]
	if w.depth == w.recordDepth { // ValueEnd's whole value, or a member's that Members records
		if k := uint(w.n - 1); k < uint(len(w.members)) { // only Members has room
			w.members[k].ValEnd = i
		} else if w.depth == 0 {
			return i, true
		}
	}
afterValue:
	if uint(i) >= uint(len(s)) {
		return 0, false
	}
	switch s[i] {
	case ',':
		i++
		goto member
	case w.closer():
		i++
		goto closed
	case ' ', '\t', '\n', '\r':
		i = SkipSpace(s, i)
		goto afterValue
	}
	return 0, false

closed: // the innermost container closed before s[i]
	if w.pop(); w.depth == 0 {
		return i, true
	}
	goto valueEnd
}

// walker is walk's state besides the position, in memory: the string loop
// keeps its few variables in registers (with everything in variables, Go
// spilled a dozen registers at every string).
type walker struct {
	objects  [(MaxDepth + 63) / 64]uint64 // bit d: the container at depth d+1 is an object
	depth    int                          // open containers
	maxOpen  int
	inObject bool // the innermost open container is an object
	inKey    bool // the string being scanned is a key (set only where the key's own loop hands over)
	escaped  bool // the last key holds escape sequences
	start    int  // where the last key starts

	record      bool     // record the outermost object's members
	recordDepth int      // 1 when they are recorded, else 0 (where ValueEnd's value ends): one test of the depth
	members     []Member // where: the first len(members) of them
	n           int      // how many there are so far
}

// member records the outermost object's next member, whose key is the last
// string scanned and whose value starts at valStart, when there is room.
func (w *walker) member(keyEnd, valStart int) {
	if k := uint(w.n); k < uint(len(w.members)) {
		m := &w.members[k]
		m.KeyStart, m.KeyEnd, m.ValStart, m.Escaped = w.start, keyEnd, valStart, w.escaped
	}
	w.n++
}

// closer is the byte that closes the innermost container.
func (w *walker) closer() byte {
	if w.inObject {
		return '}'
	}
	return ']'
}

// push opens a container.
func (w *walker) push(object bool) {
	w.inObject = object
	d := uint(w.depth)
	if object {
		w.objects[d/64%uint(len(w.objects))] |= 1 << (d % 64)
	} else {
		w.objects[d/64%uint(len(w.objects))] &^= 1 << (d % 64)
	}
	w.depth++
}

// pop closes the innermost container.
func (w *walker) pop() {
	w.depth--
	d := uint(w.depth - 1) // the one around it, if any
	w.inObject = w.depth > 0 && w.objects[d/64%uint(len(w.objects))]&(1<<(d%64)) != 0
}

// digitsEnd returns the index of the first byte from i on that is not a digit.
func digitsEnd[T Text](s T, i int) int {
	for i < len(s) && s[i]-'0' < 10 {
		i++
	}
	return i
}

// hasLiteral reports whether s[i:] starts with lit.
func hasLiteral[T Text](s T, i int, lit string) bool {
	return len(s)-i >= len(lit) && string(s[i:i+len(lit)]) == lit
}

// hexDigit marks the bytes of a \u escape's four digits.
var hexDigit = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] = true
	}
	return t
}()

// isSpace reports whether c is JSON whitespace.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// stopBytes flags the bytes of x that end a run of plain string bytes for
// walk: those specialBytes flags, and also those from 0x80, where Members
// checks UTF-8; the lowest flag is exact for the same reason. Two tests
// cover them all: x^0x02 keeps 0x00-0x1F below 0x20, moves '"' to 0x20 and
// ' ' to 0x22, so the quote and the control characters are its bytes below
// 0x21; x^'\\' is zero at a backslash. Both keep a byte's high bit, and
// after the subtractions every byte from 0x80 has it in one of them (the
// second loses it only at 0xDC, which the first keeps as 0xDE-0x21).
func stopBytes(x uint64) uint64 {
	m := &stopMasks
	return (((x ^ m[0]) - m[1]) | ((x ^ m[2]) - m[3])) & m[4]
}

// stopMasks are stopBytes' constants in memory: x86 folds a load into the
// subtraction or the mask that uses it, where a 64-bit constant takes an
// instruction of its own (three fewer per eight bytes of a string).
var stopMasks = [5]uint64{0x02 * ones, 0x21 * ones, '\\' * ones, ones, highs}

// nonDigits flags the bytes of x that are not '0'-'9' with their high bit;
// the lowest flag is exact, as in specialBytes. The first test flags the
// bytes below '0' and from 0xB0, the second those above '9' below 0xBA.
func nonDigits(x uint64) uint64 {
	return ((x - '0'*ones) | (x + (0x80-'9'-1)*ones)) & highs
}

// plainASCII is plainByte without the bytes from 0x80, for stopBytes.
var plainASCII = func() (t [256]bool) {
	copy(t[:utf8.RuneSelf], plainByte[:utf8.RuneSelf])
	return t
}()
