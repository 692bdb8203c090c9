package axiomtest

import (
	"bytes"
	"net/http"
)

// firstByte is the first non-whitespace byte of b, or 0.
func firstByte(b []byte) byte {
	for _, c := range b {
		if !isSpace(c) {
			return c
		}
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// countLines counts the non-blank lines of an NDJSON body.
func countLines(b []byte) int {
	n := 0
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if firstByte(line) != 0 {
			n++
		}
	}
	return n
}

// countJSONArray counts the elements of a top-level JSON array by tracking
// nesting and strings, without decoding values. It checks the brackets
// balance, not that every value is valid JSON.
func countJSONArray(b []byte) (int, error) {
	i := bytes.IndexByte(b, '[') + 1 // the caller saw '[' as the first byte
	n, depth, sawValue := 0, 0, false
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			end := skipString(b, i+1)
			if end < 0 {
				return 0, errUnterminated
			}
			sawValue, i = true, end
			continue
		case c == '[' || c == '{':
			depth++
			sawValue = true
		case c == ']' || c == '}':
			if depth == 0 {
				if c != ']' {
					return 0, errMismatched
				}
				if sawValue {
					n++
				} else if n > 0 {
					return 0, errEmptyElement // "[1,]"
				}
				if firstByte(b[i+1:]) != 0 {
					return 0, &bodyError{http.StatusBadRequest, "invalid JSON: data after the array"}
				}
				return n, nil
			}
			depth--
		case c == ',' && depth == 0:
			if !sawValue {
				return 0, errEmptyElement
			}
			n++
			sawValue = false
		case !isSpace(c):
			sawValue = true
		}
		i++
	}
	return 0, errUnterminated
}

// skipString returns the index after the closing quote of the string whose
// body starts at i, or -1.
func skipString(b []byte, i int) int {
	for {
		j := bytes.IndexAny(b[i:], `"\`)
		if j < 0 {
			return -1
		}
		i += j
		if b[i] == '"' {
			return i + 1
		}
		i += 2 // skip the escaped byte
		if i > len(b) {
			return -1
		}
	}
}

var (
	errUnterminated = &bodyError{http.StatusBadRequest, "invalid JSON: unterminated array or string"}
	errMismatched   = &bodyError{http.StatusBadRequest, "invalid JSON: mismatched brackets"}
	errEmptyElement = &bodyError{http.StatusBadRequest, "invalid JSON: empty array element"}
)
