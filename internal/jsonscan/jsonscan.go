// Package jsonscan looks up top-level members of JSON object text without
// decoding it: no maps, no allocations. It exists for hot paths (sampling
// rules that match log bodies) where building a map per record would cost
// more than the rest of the pipeline.
//
// It is a scanner, not a validator: malformed input never panics and usually
// yields ok=false, but text that is not valid JSON can still produce a result.
// Duplicate keys: the first occurrence wins.
package jsonscan

import (
	"strconv"
	"unicode/utf8"
)

// Text is JSON text held either as a string (log bodies) or as bytes.
type Text interface{ ~string | ~[]byte }

// Field returns the raw JSON text of the value of the top-level member key of
// the JSON object text obj (e.g. `"GET"`, `42`, `{"a":1}`), and whether it
// was found. The returned text shares obj's memory.
func Field[T Text](obj T, key string) (raw T, ok bool) {
	var zero T
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return zero, false
	}
	i++
	for {
		i = skipWS(obj, i)
		if i >= len(obj) {
			return zero, false
		}
		if obj[i] == '}' {
			return zero, false
		}
		if obj[i] != '"' {
			return zero, false
		}
		kend, ok := stringEnd(obj, i)
		if !ok {
			return zero, false
		}
		match := StringEqual(obj[i:kend], key)
		i = skipWS(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return zero, false
		}
		i = skipWS(obj, i+1)
		vend, ok := valueEnd(obj, i)
		if !ok {
			return zero, false
		}
		if match {
			return obj[i:vend], true
		}
		i = skipWS(obj, vend)
		if i >= len(obj) {
			return zero, false
		}
		switch obj[i] {
		case ',':
			i++
		case '}':
			return zero, false
		default:
			return zero, false
		}
	}
}

// IsString reports whether raw is a JSON string (starts with a quote).
func IsString[T Text](raw T) bool { return len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' }

// StringEqual reports whether the JSON string raw (with its quotes) decodes
// to exactly s. Escapes are decoded on the fly, so nothing is allocated.
func StringEqual[T Text](raw T, s string) bool {
	if !IsString(raw) {
		return false
	}
	j := 0 // position in s
	for i := 1; i < len(raw)-1; {
		c := raw[i]
		if c != '\\' {
			if j >= len(s) || s[j] != c {
				return false
			}
			i++
			j++
			continue
		}
		r, n, ok := unescape(raw, i)
		if !ok {
			return false
		}
		i += n
		var buf [utf8.UTFMax]byte
		w := utf8.EncodeRune(buf[:], r)
		if j+w > len(s) || string(buf[:w]) != s[j:j+w] {
			return false
		}
		j += w
	}
	return j == len(s)
}

// HasEscapes reports whether the JSON string raw contains escape sequences;
// when it does not, raw[1:len(raw)-1] is already the decoded value.
func HasEscapes[T Text](raw T) bool {
	for i := 1; i < len(raw)-1; i++ {
		if raw[i] == '\\' {
			return true
		}
	}
	return false
}

// AppendString appends the decoded value of the JSON string raw to dst.
func AppendString[T Text](dst []byte, raw T) ([]byte, bool) {
	if !IsString(raw) {
		return dst, false
	}
	for i := 1; i < len(raw)-1; {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		r, n, ok := unescape(raw, i)
		if !ok {
			return dst, false
		}
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst, true
}

// Number parses the JSON number raw.
func Number[T Text](raw T) (float64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	var buf [64]byte
	if len(raw) > len(buf) {
		return 0, false
	}
	n := copy(buf[:], raw)
	f, err := strconv.ParseFloat(string(buf[:n]), 64)
	return f, err == nil
}

// Bool parses the JSON literals true and false.
func Bool[T Text](raw T) (value, ok bool) {
	switch string(raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func skipWS[T Text](s T, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the closing quote of the string
// starting at s[i] == '"'.
func stringEnd[T Text](s T, i int) (int, bool) {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// valueEnd returns the index just past the value starting at s[i].
func valueEnd[T Text](s T, i int) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				end, ok := stringEnd(s, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	}
	start := i
	for ; i < len(s); i++ {
		switch s[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, i > start
		}
	}
	return i, i > start
}

// unescape decodes the escape sequence at s[i] == '\\' and returns the rune
// and the number of bytes consumed.
func unescape[T Text](s T, i int) (rune, int, bool) {
	if i+1 >= len(s) {
		return 0, 0, false
	}
	switch s[i+1] {
	case '"':
		return '"', 2, true
	case '\\':
		return '\\', 2, true
	case '/':
		return '/', 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
		r, ok := hex4(s, i+2)
		if !ok {
			return 0, 0, false
		}
		if r >= 0xD800 && r < 0xDC00 { // high surrogate: expect a low one
			if lo, ok := hex4(s, i+8); ok && i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
				return (r-0xD800)<<10 | (lo - 0xDC00) + 0x10000, 12, true
			}
			return utf8.RuneError, 6, true
		}
		if r >= 0xDC00 && r < 0xE000 {
			return utf8.RuneError, 6, true
		}
		return r, 6, true
	}
	return 0, 0, false
}

func hex4[T Text](s T, i int) (rune, bool) {
	if i < 0 || i+4 > len(s) {
		return 0, false
	}
	var r rune
	for k := i; k < i+4; k++ {
		c := s[k]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
