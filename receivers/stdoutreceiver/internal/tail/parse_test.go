package tail

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseCRI(t *testing.T) {
	tests := []struct {
		line    string
		ok      bool
		ts      string
		stream  string
		partial bool
		content string
	}{
		{line: "2016-10-06T00:17:09.669794202Z stdout P log content 1", ok: true, ts: "2016-10-06T00:17:09.669794202Z", stream: "stdout", partial: true, content: "log content 1"},
		{line: "2016-10-06T00:17:09.669794202Z stderr F {\"msg\":\"x\"}", ok: true, ts: "2016-10-06T00:17:09.669794202Z", stream: "stderr", content: `{"msg":"x"}`},
		// CRI-O writes its local zone offset.
		{line: "2023-01-02T03:04:05.123456789-05:00 stdout F hi", ok: true, ts: "2023-01-02T08:04:05.123456789Z", stream: "stdout", content: "hi"},
		// Only the first ':'-separated tag counts.
		{line: "2023-01-02T03:04:05Z stdout F:x:y hi there", ok: true, ts: "2023-01-02T03:04:05Z", stream: "stdout", content: "hi there"},
		{line: "2023-01-02T03:04:05Z stdout F ", ok: true, ts: "2023-01-02T03:04:05Z", stream: "stdout", content: ""},
		{line: "2023-01-02T03:04:05Z stdout F", ok: true, ts: "2023-01-02T03:04:05Z", stream: "stdout", content: ""},
		{line: "2023-01-02T03:04:05Z stdout F  two spaces kept", ok: true, ts: "2023-01-02T03:04:05Z", stream: "stdout", content: " two spaces kept"},
		{line: "2023-01-02T03:04:05Z stdout X hi"},
		{line: "not-a-time stdout F hi"},
		{line: "2023-01-02T03:04:05Z"},
		{line: "2023-01-02T03:04:05Z stdout"},
		{line: ""},
		{line: `{"log":"x\n","stream":"stdout","time":"2023-01-02T03:04:05Z"}`},
	}
	for _, tt := range tests {
		ts, stream, partial, content, ok := parseCRI([]byte(tt.line))
		if ok != tt.ok {
			t.Errorf("%q: ok = %v, want %v", tt.line, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		want, _ := time.Parse(time.RFC3339Nano, tt.ts)
		if !ts.Equal(want) || stream != tt.stream || partial != tt.partial || string(content) != tt.content {
			t.Errorf("%q: got (%v, %q, %v, %q), want (%v, %q, %v, %q)", tt.line, ts, stream, partial, content, want, tt.stream, tt.partial, tt.content)
		}
	}
}

func TestParseDocker(t *testing.T) {
	tests := []struct {
		line    string
		ok      bool
		ts      string
		stream  string
		partial bool
		log     string
	}{
		{line: `{"log":"hello\n","stream":"stdout","time":"2016-10-20T18:39:20.57606443Z"}`, ok: true, ts: "2016-10-20T18:39:20.57606443Z", stream: "stdout", log: "hello"},
		{line: `{"log":"part one","stream":"stderr","time":"2016-10-20T18:39:20.57606443Z"}`, ok: true, ts: "2016-10-20T18:39:20.57606443Z", stream: "stderr", partial: true, log: "part one"},
		// The escapes docker's encoder produces, plus surrogate pairs.
		{line: `{"log":"{\"msg\":\"a\\\\b \u003cx\u003e \u0026 \t \ud83d\ude00 é\"}\n","stream":"stdout","time":"2016-10-20T18:39:20Z"}`, ok: true, ts: "2016-10-20T18:39:20Z", stream: "stdout", log: "{\"msg\":\"a\\\\b <x> & \t 😀 é\"}"},
		// Any key order, whitespace, unknown keys of any type.
		{line: ` { "time" : "2016-10-20T18:39:20Z" , "attrs":{"a":["}",1]}, "n":-1.5e3, "b":true, "z":null, "stream":"stdout", "log":"x\n" } `, ok: true, ts: "2016-10-20T18:39:20Z", stream: "stdout", log: "x"},
		{line: `{"log":"\n","stream":"stdout","time":"2016-10-20T18:39:20Z"}`, ok: true, ts: "2016-10-20T18:39:20Z", stream: "stdout", log: ""},
		{line: `{"log":"lone \udc00 surrogate\n","stream":"stdout","time":"2016-10-20T18:39:20Z"}`, ok: true, ts: "2016-10-20T18:39:20Z", stream: "stdout", log: "lone \uFFFD surrogate"},
		{line: `{"stream":"stdout","time":"2016-10-20T18:39:20Z"}`},
		{line: `{"log":"x\n","stream":"stdout","time":"yesterday"}`},
		{line: `{"log":"x\n"`},
		{line: `{"log":"x\n"} trailing`},
		{line: `{"log":"unterminated}`},
		{line: `{}`},
		{line: `plain text`},
		{line: `2023-01-02T03:04:05Z stdout F hi`},
	}
	for _, tt := range tests {
		out, ts, stream, partial, ok := parseDocker([]byte(tt.line), []byte("prefix:"))
		if ok != tt.ok {
			t.Errorf("%q: ok = %v, want %v", tt.line, ok, tt.ok)
			continue
		}
		if !ok {
			if string(out) != "prefix:" {
				t.Errorf("%q: failed parse changed dst to %q", tt.line, out)
			}
			continue
		}
		want, _ := time.Parse(time.RFC3339Nano, tt.ts)
		if !ts.Equal(want) || stream != tt.stream || partial != tt.partial || string(out) != "prefix:"+tt.log {
			t.Errorf("%q: got (%v, %q, %v, %q), want (%v, %q, %v, %q)", tt.line, ts, stream, partial, out, want, tt.stream, tt.partial, "prefix:"+tt.log)
		}
	}
}

func FuzzParseCRI(f *testing.F) {
	for _, s := range []string{
		"2016-10-06T00:17:09.669794202Z stdout P log content 1",
		"2016-10-06T00:17:09.669794202Z stderr F {\"msg\":\"x\"}",
		"2023-01-02T03:04:05.123456789-05:00 stdout F:x hi",
		"2023-01-02T03:04:05Z stdout F",
		"2023-01-02T03:04:05Z  F x",
		"x y z",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		_, stream, _, content, ok := parseCRI(line)
		if !ok {
			return
		}
		// The content is the line's tail and the stream one of its fields.
		if !bytes.HasSuffix(line, content) || len(content) >= len(line) {
			t.Fatalf("content %q is not a proper suffix of %q", content, line)
		}
		if stream == "" || !bytes.Contains(line, []byte(" "+stream+" ")) {
			t.Fatalf("stream %q not a field of %q", stream, line)
		}
	})
}

// FuzzParseDocker checks parseDocker against encoding/json on every line
// encoding/json accepts: the same log text, stream and time.
func FuzzParseDocker(f *testing.F) {
	for _, s := range []string{
		`{"log":"hello\n","stream":"stdout","time":"2016-10-20T18:39:20.57606443Z"}`,
		`{"log":"part","stream":"stderr","time":"2016-10-20T18:39:20Z"}`,
		`{"log":"\u003c\ud83d\ude00\\\"\/\b\f\r\t\n","stream":"stdout","time":"2016-10-20T18:39:20Z"}`,
		`{"attrs":{"a":[1,"]"]},"log":"x\n","stream":"stdout","time":"2016-10-20T18:39:20Z"}`,
		`{"log":"\ud800\n","stream":"stdout","time":"2016-10-20T18:39:20Z"}`,
		`{"l\u006fg":"x"}`,
		`{"log":1}`,
		`{`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		out, ts, stream, partial, ok := parseDocker(line, nil)
		// Compare only where encoding/json gives one clear answer: valid
		// UTF-8, an object without duplicate keys, string fields.
		var m map[string]json.RawMessage
		if !utf8.Valid(line) || json.Unmarshal(line, &m) != nil || len(m) != countTopKeys(line) {
			return
		}
		var log, refStream, refTime string
		if !jsonString(m["log"], &log) {
			if ok {
				t.Fatalf("%q: accepted without a string log", line)
			}
			return
		}
		if raw, has := m["stream"]; has && !jsonString(raw, &refStream) {
			return
		}
		var wantTime time.Time
		if raw, has := m["time"]; has {
			if !jsonString(raw, &refTime) {
				return
			}
			var err error
			if wantTime, err = time.Parse(time.RFC3339Nano, refTime); err != nil {
				if ok {
					t.Fatalf("%q: accepted bad time %q", line, refTime)
				}
				return
			}
		}
		if !ok {
			t.Fatalf("rejected %q that encoding/json reads", line)
		}
		want := strings.TrimSuffix(log, "\n")
		if string(out) != want || partial != !strings.HasSuffix(log, "\n") || stream != refStream || !ts.Equal(wantTime) {
			t.Fatalf("%q: got (%q, %q, %v, %v), encoding/json says (%q, %q, %v)", line, out, stream, partial, ts, want, refStream, wantTime)
		}
	})
}

func jsonString(raw json.RawMessage, dst *string) bool {
	return len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, dst) == nil
}

// countTopKeys counts the keys of a JSON object, duplicates included.
func countTopKeys(line []byte) int {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil {
		return -1
	}
	n := 0
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return -1
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return -1
		}
		n++
	}
	return n
}
