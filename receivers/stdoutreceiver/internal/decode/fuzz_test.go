package decode

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sidecarhq/sidecar/internal/jsontext"
	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// FuzzDecode checks, for any line: no panic; exactly one record (or a span
// line, or a skipped blank line); a raw-event body is a valid JSON object
// with _time that keeps every other top-level member of the line; a text
// body is the line itself (UTF-8 repaired); and a line encoding/json accepts
// as an object is never demoted to text.
func FuzzDecode(f *testing.F) {
	for _, l := range pinoLines {
		f.Add(l)
	}
	for _, l := range []string{
		spanLine, `{}`, `{"time":1}`, `{"_time":"x","time":1}`, `{"a":1,"time":2}`, `{"ts":1.5e9,"level":"INFO"}`,
		`{"@timestamp":"2026-01-01T00:00:00Z","log.level":"WARN"}`, `{"timestamp":"nope","level":"Error"}`,
		`{"level":"\u0049NFO"}`, `{"a":1,"a":2,"b":3,"a":4}`, `{"time":1,"time":2,"_time":3,"_time":4,"time":5}`, `{"\u0061":1,"a":2}`, `{"level":-5}`, `{"level":1e400}`, `{"ts":-1e300}`, `{"time":1e30}`, `{"time":-1234567890123456789}`, `{"ts":1764504000}`, `{"ts":1764504000123456}`,
		"panic: x", "\xff{\"a\":1}", "{\"a\":\"\xff\"}", `{"a":[[[[]]]]}`, `{"resourceSpans":[]}`, "  ",
	} {
		f.Add(l)
	}
	d := New(Options{Traces: true})
	f.Fuzz(func(t *testing.T, line string) {
		out := d.Decode(stream.Batch{Lines: []stream.Line{{Data: []byte(line)}}}, nil, testNow)
		s := out.Stats
		if s.JSON+s.Text+s.SpanLines+s.Empty != 1 {
			t.Fatalf("line not accounted for exactly once: %+v", s)
		}
		checkOneLineScopes(t, out.Logs)
		if s.SpanLines == 1 || s.Empty == 1 {
			return
		}
		_, recs := decodeLines(t, Options{Traces: true}, stream.Line{Data: []byte(line)})
		r := recs[0]
		if !utf8.ValidString(r.body) {
			t.Fatalf("body is not valid UTF-8: %q", r.body)
		}
		fixed := strings.ToValidUTF8(strings.TrimRight(line, "\r"), "\uFFFD")
		isObject := json.Valid([]byte(fixed)) && strings.HasPrefix(strings.TrimSpace(fixed), "{")
		if !r.raw {
			if r.body != fixed {
				t.Fatalf("text body %q, want %q", r.body, fixed)
			}
			if isObject && !strings.Contains(fixed, strings.Repeat("[", jsontext.MaxDepth/2)) && !strings.Contains(fixed, strings.Repeat("{", jsontext.MaxDepth/2)) {
				t.Fatalf("valid JSON object kept as text: %q", fixed)
			}
			return
		}
		if !isObject {
			t.Fatalf("invalid JSON decoded as an object: %q", fixed)
		}
		var in, got map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.body), &got); err != nil {
			t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
		}
		if _, ok := got["_time"]; !ok {
			t.Fatalf("no _time in %s", r.body)
		}
		if n := topLevelMembers(t, r.body); n != len(got) {
			t.Fatalf("duplicate keys left in %s", r.body)
		}
		if err := json.Unmarshal([]byte(fixed), &in); err != nil {
			t.Fatal(err)
		}
		for k, v := range in {
			switch k {
			case "_time", "time", "timestamp", "ts", "@timestamp", "level", "log.level":
				continue
			}
			if !bytes.Equal(compact(got[k]), compact(v)) {
				t.Fatalf("member %q changed: %s -> %s", k, v, got[k])
			}
		}
	})
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// topLevelMembers counts the members of a JSON object, duplicates included.
func topLevelMembers(t *testing.T, obj string) int {
	dec := json.NewDecoder(strings.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for dec.More() {
		var key string
		var v json.RawMessage
		if tok, err := dec.Token(); err != nil {
			t.Fatal(err)
		} else {
			key, _ = tok.(string)
		}
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err, key)
		}
		n++
	}
	return n
}
