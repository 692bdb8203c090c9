package tail

import (
	"bytes"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	streamStdout = "stdout"
	streamStderr = "stderr"
)

// streamName returns the constant for the usual streams so that a line does
// not allocate a string for them.
func streamName(b []byte) string {
	switch string(b) {
	case streamStdout:
		return streamStdout
	case streamStderr:
		return streamStderr
	}
	return string(b)
}

// parseCRI splits a CRI (containerd, CRI-O) log line:
// "<RFC3339Nano> <stdout|stderr> <tag> <content>". The tag is ':'-separated
// and only its first element (P = partial, F = full) is interpreted, as the
// kubelet does. content aliases line.
func parseCRI(line []byte) (ts time.Time, stream string, partial bool, content []byte, ok bool) {
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 {
		return ts, "", false, nil, false
	}
	ts, err := time.Parse(time.RFC3339Nano, string(line[:sp]))
	if err != nil {
		return ts, "", false, nil, false
	}
	rest := line[sp+1:]
	sp = bytes.IndexByte(rest, ' ')
	if sp <= 0 {
		return ts, "", false, nil, false
	}
	stream = streamName(rest[:sp])
	rest = rest[sp+1:]
	tag := rest
	if sp = bytes.IndexByte(rest, ' '); sp >= 0 {
		tag, content = rest[:sp], rest[sp+1:]
	} else {
		content = rest[len(rest):]
	}
	if c := bytes.IndexByte(tag, ':'); c >= 0 {
		tag = tag[:c]
	}
	switch string(tag) {
	case "P":
		partial = true
	case "F":
	default:
		return ts, "", false, nil, false
	}
	return ts, stream, partial, content, true
}

// parseDocker decodes a docker json-file line
// {"log":"…\n","stream":"stdout","time":"…"} and appends the unescaped log
// text to dst. A log without its trailing newline is a piece of a line that
// docker split at 16 KiB (partial); the newline itself is not appended. Keys
// may come in any order and unknown keys (e.g. "attrs") are skipped.
func parseDocker(line, dst []byte) (out []byte, ts time.Time, stream string, partial bool, ok bool) {
	out = dst
	p := skipSpace(line, 0)
	if p >= len(line) || line[p] != '{' {
		return dst, ts, "", false, false
	}
	p = skipSpace(line, p+1)
	haveLog := false
	if p < len(line) && line[p] == '}' {
		return dst, ts, "", false, false
	}
	for {
		if p >= len(line) || line[p] != '"' {
			return dst, ts, "", false, false
		}
		keyEnd, ok := scanString(line, p)
		if !ok {
			return dst, ts, "", false, false
		}
		key := line[p+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 { // never from docker; decode to be exact
			key = unescapeJSON(nil, key)
		}
		p = skipSpace(line, keyEnd)
		if p >= len(line) || line[p] != ':' {
			return dst, ts, "", false, false
		}
		p = skipSpace(line, p+1)
		switch {
		case string(key) == "log" && p < len(line) && line[p] == '"':
			end, ok := scanString(line, p)
			if !ok {
				return dst, ts, "", false, false
			}
			out = unescapeJSON(dst, line[p+1:end-1])
			haveLog = true
			p = end
		case string(key) == "stream" && p < len(line) && line[p] == '"':
			end, ok := scanString(line, p)
			if !ok {
				return dst, ts, "", false, false
			}
			stream = streamName(line[p+1 : end-1])
			p = end
		case string(key) == "time" && p < len(line) && line[p] == '"':
			end, ok := scanString(line, p)
			if !ok {
				return dst, ts, "", false, false
			}
			t, err := time.Parse(time.RFC3339Nano, string(line[p+1:end-1]))
			if err != nil {
				return dst, ts, "", false, false
			}
			ts = t
			p = end
		default:
			end, ok := skipValue(line, p)
			if !ok {
				return dst, ts, "", false, false
			}
			p = end
		}
		p = skipSpace(line, p)
		if p >= len(line) {
			return dst, ts, "", false, false
		}
		if line[p] == '}' {
			if skipSpace(line, p+1) != len(line) || !haveLog {
				return dst, ts, "", false, false
			}
			break
		}
		if line[p] != ',' {
			return dst, ts, "", false, false
		}
		p = skipSpace(line, p+1)
	}
	if n := len(out); n > len(dst) && out[n-1] == '\n' {
		return out[:n-1], ts, stream, false, true
	}
	return out, ts, stream, true, true
}

func skipSpace(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\r' || b[p] == '\n') {
		p++
	}
	return p
}

// scanString returns the index just past the JSON string starting at b[p]=='"'.
func scanString(b []byte, p int) (int, bool) {
	for i := p + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the index just past the JSON value starting at b[p]. It
// checks brackets and strings, which is enough to find where the value ends;
// the contents of values we skip are not validated further.
func skipValue(b []byte, p int) (int, bool) {
	depth := 0
	for p < len(b) {
		switch c := b[p]; c {
		case '"':
			end, ok := scanString(b, p)
			if !ok {
				return 0, false
			}
			p = end
		case '{', '[':
			depth++
			p++
		case '}', ']':
			if depth == 0 {
				return p, true
			}
			depth--
			p++
		case ',':
			if depth == 0 {
				return p, true
			}
			p++
		default:
			p++
		}
		if depth == 0 && p < len(b) && (b[p] == ',' || b[p] == '}') {
			return p, true
		}
	}
	return 0, false
}

// unescapeJSON appends the decoded content of a JSON string (without its
// quotes) to dst, following encoding/json: bad escapes and lone surrogates
// become U+FFFD.
func unescapeJSON(dst, s []byte) []byte {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i:]
		if len(s) < 2 {
			return utf8.AppendRune(dst, utf8.RuneError)
		}
		switch c := s[1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s[2:])
			if !ok {
				dst = utf8.AppendRune(dst, utf8.RuneError)
				s = s[2:]
				continue
			}
			s = s[6:]
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(0), false
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					r2, ok2 = hex4(s[2:])
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					s = s[6:]
					r = dec
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			dst = utf8.AppendRune(dst, utf8.RuneError)
		}
		s = s[2:]
	}
	return dst
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
