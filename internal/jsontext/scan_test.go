package jsontext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// valid reports whether s is exactly one JSON value, surrounded by optional
// whitespace, by this package's scanner.
func valid[T Text](s T) bool {
	end, ok := ValueEnd(s, SkipSpace(s, 0))
	return ok && SkipSpace(s, end) == len(s)
}

var validityCases = []string{
	`{}`, `{"a":1}`, `{"a":-0.5e+10}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":"\u00zz"}`, `{"a":"\q"}`,
	`{"a":[1,{"b":[]}],"c":{}}`, `{"a":[1,]}`, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `{"a":tru}`, `{"a":nul}`,
	"{\"a\":\"tab\there\"}", `{"a":"x"}}`, `{"a":{"b":1}`, `{"a":"\"\\\/\b\f\n\r\t\u1234"}`, `{"a":true,"b":false,"c":null}`,
	` [ 1 , "x" ] `, `"\ud83d\ude00"`, `"\u123"`, `-`, `-0`, `1e`, `1e+`, `2E-3`, `nulll`, ``, ` `, `"unterminated`,
	`"ends in escape\"`, `"long string without anything special in it at all"`, `"eight!!!"`,
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validityCases {
		if got, want := valid(c), json.Valid([]byte(c)); got != want {
			t.Errorf("%s: valid %v, json.Valid %v", c, got, want)
		}
		if got := valid([]byte(c)); got != valid(c) {
			t.Errorf("%s: string and []byte disagree", c)
		}
	}
}

func TestMaxDepth(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if !valid(deep(MaxDepth - 1)) {
		t.Errorf("nesting of %d rejected", MaxDepth-1)
	}
	if valid(deep(MaxDepth)) {
		t.Errorf("nesting of %d accepted", MaxDepth)
	}
}

func TestStringEnd(t *testing.T) {
	for _, c := range []struct {
		s       string
		end     int
		escaped bool
		ok      bool
	}{
		{`"abc" tail`, 5, false, true},
		{`"a\"b",`, 6, true, true},
		{`"0123456789abcdef\u00e9"`, 24, true, true},
		{"\"ctl\x01\"", 0, false, false},
		{`"no end`, 0, false, false},
	} {
		end, escaped, ok := StringEnd(c.s, 0)
		if end != c.end || escaped != c.escaped || ok != c.ok {
			t.Errorf("StringEnd(%q) = %d, %v, %v; want %d, %v, %v", c.s, end, escaped, ok, c.end, c.escaped, c.ok)
		}
	}
}

func TestAppendStringLoneSurrogates(t *testing.T) {
	for raw, want := range map[string]string{
		`"a\udc00b"`:      "a\uFFFDb",
		`"\ud800"`:        "\uFFFD",
		`"\ud800\u0041"`:  "\uFFFDA",
		`"\ud83d\ude00!"`: "😀!",
		`"plain"`:         "plain",
		`"x\\y\/z\n"`:     "x\\y/z\n",
	} {
		var viaJSON string
		if err := json.Unmarshal([]byte(raw), &viaJSON); err != nil || viaJSON != want {
			t.Fatalf("bad case %s: encoding/json gives %q, %v", raw, viaJSON, err)
		}
		if got, ok := AppendString([]byte("p:"), []byte(raw)); !ok || string(got) != "p:"+want {
			t.Errorf("AppendString(%s) = %q, %v; want %q", raw, got, ok, want)
		}
	}
}

func TestScanZeroAllocs(t *testing.T) {
	line := []byte(`{"level":30,"msg":"request \"done\"","tags":["a",{"b":null}],"n":-1.5e3}`)
	dst := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		if !valid(line) {
			t.Fatal("invalid")
		}
		raw, ok := Field(line, "msg")
		if !ok || !HasEscapes(raw) {
			t.Fatal("no msg")
		}
		if _, ok := AppendString(dst[:0], raw); !ok {
			t.Fatal("bad string")
		}
	})
	if allocs != 0 {
		t.Errorf("allocations = %v, want 0", allocs)
	}
}

// FuzzValue holds the scanner to encoding/json: the same texts are valid,
// and a valid string decodes to what encoding/json decodes it to.
func FuzzValue(f *testing.F) {
	for _, c := range validityCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := valid(b)
		if valid(string(b)) != got {
			t.Fatalf("%q: string and []byte disagree", b)
		}
		if bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) < MaxDepth {
			if want := json.Valid(b); got != want {
				t.Fatalf("%q: valid %v, json.Valid %v", b, got, want)
			}
		}
		if !got || !utf8.Valid(b) {
			return
		}
		raw := bytes.TrimSpace(b)
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return // not a string (null also unmarshals into one)
		}
		if out, ok := AppendString(nil, raw); !ok || string(out) != s {
			t.Fatalf("AppendString(%s) = %q, %v; encoding/json says %q", raw, out, ok, s)
		}
		if !StringEqual(raw, s) || StringEqual(raw, s+"x") {
			t.Fatalf("StringEqual(%s, %q) disagrees with encoding/json", raw, s)
		}
		if _, escaped, _ := StringEnd(raw, 0); escaped != HasEscapes(raw) {
			t.Fatalf("%s: StringEnd escaped=%v, HasEscapes=%v", raw, escaped, !escaped)
		}
	})
}
