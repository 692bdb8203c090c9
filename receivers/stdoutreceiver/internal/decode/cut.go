package decode

import (
	"unicode/utf8"

	"github.com/sidecarhq/sidecar/internal/jsontext"
)

// appendClosed appends to dst the first bytes of a JSON object that a
// transport cut at its line limit, closed so that they are JSON again: a
// string being written at the cut ends there (at a whole character and a
// whole escape), a member or element with no complete value is left out,
// and the open objects and arrays are closed. ok is false when the bytes
// are not the start of a JSON object.
func appendClosed(dst, s []byte) (_ []byte, ok bool) {
	const (
		keyOrClose   = iota // after '{'
		key                 // after ',' in an object
		colon               // after a key
		value               // after ':' or ',' in an array
		valueOrClose        // after '['
		after               // after a value
	)
	var stack []byte // the open containers' closing brackets, innermost last
	i := jsontext.SkipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return dst, false
	}
	i++
	stack = append(stack, '}')
	safe, safeDepth := i, 1 // the longest prefix that closes into JSON
	state := keyOrClose
	strCut := -1 // start of a value string still open at the cut
	closed := func() {
		stack = stack[:len(stack)-1]
		state, safe, safeDepth = after, i, len(stack)
	}
scan:
	for {
		i = jsontext.SkipSpace(s, i)
		if i >= len(s) {
			break
		}
		c := s[i]
		switch state {
		case keyOrClose, key:
			if state == keyOrClose && c == '}' {
				i++
				if closed(); len(stack) == 0 {
					return dst, false // complete, not cut
				}
				continue
			}
			if c != '"' {
				return dst, false
			}
			end, _, ok := jsontext.StringEnd(s, i)
			if !ok {
				break scan
			}
			i, state = end, colon
		case colon:
			if c != ':' {
				return dst, false
			}
			i, state = i+1, value
		case value, valueOrClose:
			switch {
			case state == valueOrClose && c == ']':
				i++
				closed()
			case c == '{' || c == '[':
				if len(stack) >= jsontext.MaxDepth {
					return dst, false
				}
				i++
				if c == '{' {
					stack, state = append(stack, '}'), keyOrClose
				} else {
					stack, state = append(stack, ']'), valueOrClose
				}
				safe, safeDepth = i, len(stack)
			case c == '"':
				end, _, ok := jsontext.StringEnd(s, i)
				if !ok {
					strCut = i
					break scan
				}
				i, state, safe, safeDepth = end, after, end, len(stack)
			default:
				end, ok := jsontext.ValueEnd(s, i)
				if !ok || end == len(s) { // a number may go on past the cut
					break scan
				}
				i, state, safe, safeDepth = end, after, end, len(stack)
			}
		case after:
			switch {
			case c == ',':
				i++
				if stack[len(stack)-1] == '}' {
					state = key
				} else {
					state = value
				}
			case c == stack[len(stack)-1]:
				i++
				if closed(); len(stack) == 0 {
					return dst, false // complete, not cut
				}
			default:
				return dst, false
			}
		}
	}
	if strCut >= 0 {
		cut, ok := stringCut(s, strCut)
		if !ok {
			return dst, false
		}
		dst = append(dst, s[:cut]...)
		dst = append(dst, '"')
		return appendClosers(dst, stack), true
	}
	dst = append(dst, s[:safe]...)
	return appendClosers(dst, stack[:safeDepth]), true
}

// stringCut returns where the string opening at s[i] and running past the
// end of s can be cut: before an incomplete escape at the end. ok is false
// if the string holds something invalid before that.
func stringCut(s []byte, i int) (int, bool) {
	for j := i + 1; j < len(s); {
		switch c := s[j]; {
		case c == '\\':
			if j+1 >= len(s) {
				return j, true
			}
			if s[j+1] != 'u' {
				j += 2
				continue
			}
			if j+6 > len(s) {
				return j, true
			}
			for _, h := range s[j+2 : j+6] {
				if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
					return 0, false
				}
			}
			j += 6
		case c < 0x20:
			return 0, false
		default:
			j++
		}
	}
	return len(s), true
}

func appendClosers(dst, stack []byte) []byte {
	for k := len(stack) - 1; k >= 0; k-- {
		dst = append(dst, stack[k])
	}
	return dst
}

// trimPartialRune drops a UTF-8 sequence the cut split at the end of s.
func trimPartialRune(s []byte) []byte {
	for k := 1; k < utf8.UTFMax && k <= len(s); k++ {
		if c := s[len(s)-k]; c < 0x80 {
			return s
		} else if utf8.RuneStart(c) {
			if !utf8.FullRune(s[len(s)-k:]) {
				return s[:len(s)-k]
			}
			return s
		}
	}
	return s
}
