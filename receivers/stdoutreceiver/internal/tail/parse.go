package tail

import (
	"bytes"
	"time"

	"github.com/sidecarhq/sidecar/internal/jsontext"
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
// may come in any order and unknown keys (e.g. "attrs") are skipped. The line
// must be valid JSON, as docker's encoder writes it; anything else is not ok.
func parseDocker(line, dst []byte) (out []byte, ts time.Time, stream string, partial bool, ok bool) {
	out = dst
	p := jsontext.SkipSpace(line, 0)
	if p >= len(line) || line[p] != '{' {
		return dst, ts, "", false, false
	}
	p = jsontext.SkipSpace(line, p+1)
	haveLog := false
	if p < len(line) && line[p] == '}' {
		return dst, ts, "", false, false
	}
	for {
		if p >= len(line) || line[p] != '"' {
			return dst, ts, "", false, false
		}
		keyEnd, escaped, ok := jsontext.StringEnd(line, p)
		if !ok {
			return dst, ts, "", false, false
		}
		key := line[p+1 : keyEnd-1]
		if escaped { // never from docker; decode to be exact
			key, _ = jsontext.AppendString(nil, line[p:keyEnd])
		}
		p = jsontext.SkipSpace(line, keyEnd)
		if p >= len(line) || line[p] != ':' {
			return dst, ts, "", false, false
		}
		p = jsontext.SkipSpace(line, p+1)
		switch {
		case string(key) == "log" && p < len(line) && line[p] == '"':
			end, _, ok := jsontext.StringEnd(line, p)
			if !ok {
				return dst, ts, "", false, false
			}
			out, _ = jsontext.AppendString(dst, line[p:end])
			haveLog = true
			p = end
		case string(key) == "stream" && p < len(line) && line[p] == '"':
			end, _, ok := jsontext.StringEnd(line, p)
			if !ok {
				return dst, ts, "", false, false
			}
			stream = streamName(line[p+1 : end-1])
			p = end
		case string(key) == "time" && p < len(line) && line[p] == '"':
			end, _, ok := jsontext.StringEnd(line, p)
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
			end, ok := jsontext.ValueEnd(line, p)
			if !ok {
				return dst, ts, "", false, false
			}
			p = end
		}
		p = jsontext.SkipSpace(line, p)
		if p >= len(line) {
			return dst, ts, "", false, false
		}
		if line[p] == '}' {
			if jsontext.SkipSpace(line, p+1) != len(line) || !haveLog {
				return dst, ts, "", false, false
			}
			break
		}
		if line[p] != ',' {
			return dst, ts, "", false, false
		}
		p = jsontext.SkipSpace(line, p+1)
	}
	if n := len(out); n > len(dst) && out[n-1] == '\n' {
		return out[:n-1], ts, stream, false, true
	}
	return out, ts, stream, true, true
}
