package jsontext

import (
	"bytes"
	"encoding/json"
	"slices"
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
	`1764504000000`, `[1764504000000,2]`, `{"t":12345678}`, `123456789012345678901234`, `12345678.5e-3`, `123456789a`,
	`012345678`, `-1234567890123`, `1234567890.`, `[12345678 ]`,
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
// a valid string decodes to what encoding/json decodes it to, and an
// object's members are where encoding/json finds them.
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
		checkMembers(t, b)
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

// checkMembers holds Members to encoding/json and utf8.Valid for any text
// that starts with '{' after whitespace: it accepts exactly the valid
// objects with valid UTF-8, and finds their members where encoding/json
// does.
func checkMembers(t *testing.T, b []byte) {
	t.Helper()
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	members, end, ok := Members(b, i, make([]Member, 0, 2)) // room for two: more takes the second walk
	got := ok && SkipSpace(b, end) == len(b)
	if bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) <= MaxDepth {
		if want := json.Valid(b) && utf8.Valid(b); got != want {
			t.Fatalf("%q: Members %v, json.Valid and utf8.Valid %v", b, got, want)
		}
	}
	if !got {
		return
	}
	if sm, send, sok := Members(string(b), i, nil); !sok || send != end || !slices.Equal(sm, members) {
		t.Fatalf("%q: string and []byte disagree", b)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; dec.More(); n++ {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		if n >= len(members) {
			t.Fatalf("%q: Members found %d members, encoding/json more", b, len(members))
		}
		m := members[n]
		key, _ := AppendString(nil, b[m.KeyStart:m.KeyEnd])
		if string(key) != tok.(string) || m.Escaped != HasEscapes(b[m.KeyStart:m.KeyEnd]) {
			t.Fatalf("%q: member %d key %s (escaped %v), encoding/json %q", b, n, b[m.KeyStart:m.KeyEnd], m.Escaped, tok)
		}
		if !bytes.Equal(b[m.ValStart:m.ValEnd], raw) {
			t.Fatalf("%q: member %d value %s, encoding/json %s", b, n, b[m.ValStart:m.ValEnd], raw)
		}
	}
	if n != len(members) {
		t.Fatalf("%q: Members found %d members, encoding/json %d", b, len(members), n)
	}
}

func TestMembers(t *testing.T) {
	line := " { \"a\" : 1 ,\"b\\u0062\":[ {\"c\":\"x\"} ] ,\n\"d\":{}}"
	members, end, ok := Members(line, 1, nil)
	if !ok || end != len(line) {
		t.Fatalf("Members = %v, %d, %v", members, end, ok)
	}
	want := []Member{
		{KeyStart: 3, KeyEnd: 6, ValStart: 9, ValEnd: 10},
		{KeyStart: 12, KeyEnd: 21, ValStart: 22, ValEnd: 35, Escaped: true},
		{KeyStart: 38, KeyEnd: 41, ValStart: 42, ValEnd: 44},
	}
	if !slices.Equal(members, want) {
		t.Errorf("Members = %+v, want %+v", members, want)
	}
	for _, c := range []string{`{"a":1,}`, `{"a" 1}`, `[1]`, ` {}`, `{"a":1}x`, `{"a":[1,{"b":2]}`} {
		checkMembers(t, []byte(c))
	}
	for _, c := range validityCases {
		checkMembers(t, []byte(c))
	}
	many := "{" + strings.Repeat(`"k":1,`, 100) + `"k":2}`
	if members, _, ok := Members(many, 0, make([]Member, 0, 3)); !ok || len(members) != 101 || many[members[100].ValStart] != '2' {
		t.Errorf("101 members: %d, %v", len(members), ok)
	}
}

// TestMembersUTF8: Members rejects a string that is not valid UTF-8
// (ValueEnd, as encoding/json, does not look).
func TestMembersUTF8(t *testing.T) {
	for _, s := range []string{
		"é", "€", "😀", "\u00e9 é", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf",
		"\xff", "\x80", "\xc0\x80", "\xc1\xbf", "\xe0\x9f\xbf", "\xed\xa0\x80", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
		"\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xe2\x82x", "eight!!!\xc3\xa9", "long text before the bad byte \xff",
	} {
		for _, obj := range []string{`{"` + s + `":1}`, `{"k":"` + s + `"}`, `{"k":["` + s + `"]}`} {
			_, end, ok := Members(obj, 0, nil)
			if got, want := ok && end == len(obj), utf8.ValidString(obj); got != want {
				t.Errorf("Members(%q) = %v, want %v", obj, got, want)
			}
			if !valid(obj) {
				t.Errorf("ValueEnd(%q) rejected it", obj)
			}
		}
	}
}

func TestMembersMaxDepth(t *testing.T) {
	deep := func(n int) string { return "{\"a\":" + strings.Repeat("[", n) + strings.Repeat("]", n) + "}" }
	if _, _, ok := Members(deep(MaxDepth-1), 0, nil); !ok {
		t.Errorf("object around %d nested arrays rejected", MaxDepth-1)
	}
	if _, _, ok := Members(deep(MaxDepth), 0, nil); ok {
		t.Errorf("object around %d nested arrays accepted", MaxDepth)
	}
}
