package jsontext

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// IsString reports whether raw looks like a JSON string (quote at both ends).
func IsString[T Text](raw T) bool { return len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' }

// HasEscapes reports whether the JSON string raw contains escape sequences;
// when it does not, raw[1:len(raw)-1] is already the decoded value.
func HasEscapes[T Text](raw T) bool {
	return len(raw) >= 2 && backslash(raw[:len(raw)-1], 1) < len(raw)-1
}

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

// AppendString appends the decoded value of the JSON string raw (with its
// quotes) to dst, as encoding/json decodes it: a lone surrogate becomes
// U+FFFD. ok is false if raw is not a string or holds a bad escape.
func AppendString[T Text](dst []byte, raw T) (_ []byte, ok bool) {
	if !IsString(raw) {
		return dst, false
	}
	s := raw[:len(raw)-1]
	for i := 1; i < len(s); {
		j := backslash(s, i)
		dst = append(dst, s[i:j]...)
		if j == len(s) {
			break
		}
		r, n, ok := unescape(s, j)
		if !ok {
			return dst, false
		}
		dst = utf8.AppendRune(dst, r)
		i = j + n
	}
	return dst, true
}

// backslash returns the index of the first '\\' in s from i on, or len(s).
// Log text rarely holds one, so the common types get the vectorised search.
func backslash[T Text](s T, i int) int {
	k := -1
	switch v := any(s[i:]).(type) {
	case []byte:
		k = bytes.IndexByte(v, '\\')
	case string:
		k = strings.IndexByte(v, '\\')
	default:
		for k = 0; k < len(s)-i && s[i+k] != '\\'; k++ {
		}
	}
	if k < 0 {
		return len(s)
	}
	return i + k
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
			if lo, ok := hex4(s, i+8); ok && s[i+6] == '\\' && s[i+7] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
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

// hex4 decodes the four hex digits at s[i:i+4].
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
