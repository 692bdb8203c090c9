// Package jsontext reads JSON text in place, held as a string or as bytes,
// without decoding it into values: no maps, no allocations. It is the one
// JSON scanner of sidecar's hot paths: the stdout receiver's JSON line
// decoder, its docker json-file parser and the sampler's body-field rules all
// build on it.
//
//   - scan.go: where whitespace and a string end (SkipSpace, StringEnd),
//     validating as they go;
//   - walk.go: where a value ends (ValueEnd), and where an object's members
//     are (Members), in one loop over the bytes;
//   - string.go: what a string or scalar decodes to (AppendString,
//     StringEqual, Number, Bool);
//   - field.go: the value of one top-level member of an object (Field).
//
// Validation follows encoding/json (scan_test.go's fuzz test holds the
// package to it), except that nesting deeper than MaxDepth is rejected and
// strings are not checked for valid UTF-8 (callers that need it check the
// whole text once), but by Members, which checks them as it passes.
package jsontext

import "math/bits"

// Text is JSON text held either as a string (log bodies) or as bytes (lines).
type Text interface{ ~string | ~[]byte }

// MaxDepth bounds nesting so hostile text cannot exhaust the stack; Axiom
// itself cuts nesting deeper than 100 levels. The count includes one
// enclosing level (the object a value is a member of), so ValueEnd accepts
// up to MaxDepth-1 nested containers.
const MaxDepth = 128

// SkipSpace returns the index of the first byte from i on that is not JSON
// whitespace. Most JSON lines have none between tokens, so the first test
// (above the space character) usually ends it.
func SkipSpace[T Text](s T, i int) int {
	for i < len(s) {
		if c := s[i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
		i++
	}
	return i
}

// StringEnd validates the string starting at s[i] == '"' and returns the
// index just past its closing quote, and whether it holds escape sequences
// (when it does not, s[i+1:end-1] is already the decoded value).
//
// It tests eight bytes at a time (strings are most of a log line), in a
// loop of its own, and looks at single bytes only at the end of the text.
// One function, no call per string: a line holds a few dozen, most of them
// short.
func StringEnd[T Text](s T, i int) (end int, escaped, ok bool) {
	i++
	for {
		for i+8 <= len(s) {
			if special := specialBytes(load64(s, i)); special != 0 {
				i += bits.TrailingZeros64(special) / 8
				goto look
			}
			i += 8
		}
		for i < len(s) && plainByte[s[i]] {
			i++
		}
		if i >= len(s) {
			return 0, false, false
		}
	look:
		switch s[i] {
		case '"':
			return i + 1, escaped, true
		case '\\':
			escaped = true
			i++
			if i >= len(s) {
				return 0, false, false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if _, ok := hex4(s, i+1); !ok {
					return 0, false, false
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

// specialBytes flags the bytes of x (eight bytes, little-endian) that are
// '"', '\\' or below 0x20 with their high bit; the lowest flag is exact (a
// borrow only runs upwards), so it is the next byte to look at. quote and
// slash have their high bits where x has, so the three zero tests share one
// mask of x's high bits (bytes from 0x80, UTF-8, are never flagged).
func specialBytes(x uint64) uint64 {
	quote := x ^ ('"' * ones)
	slash := x ^ ('\\' * ones)
	return ((quote - ones) | (slash - ones) | (x - 0x20*ones)) &^ x & highs
}

// ones and highs are a byte's 1 and its high bit in each byte of a word.
const ones, highs = 0x0101010101010101, 0x8080808080808080

// plainByte marks the bytes a JSON string can hold without a closer look:
// not a quote, not a backslash, not a control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// load64 reads s[i:i+8] little-endian; the compiler merges it into one load.
func load64[T Text](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
