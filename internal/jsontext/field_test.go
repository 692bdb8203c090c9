package jsontext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"unicode/utf8"
)

func TestField(t *testing.T) {
	obj := `{"level":"info", "route" : "/health", "n": -12.5e1, "ok":true, "nested":{"route":"x","a":[1,"}"]}, "esc\u0061ped":"a\"b\u00e9\ud83d\ude00", "last":null}`
	cases := []struct {
		key, want string
		ok        bool
	}{
		{"level", `"info"`, true},
		{"route", `"/health"`, true},
		{"n", `-12.5e1`, true},
		{"ok", `true`, true},
		{"nested", `{"route":"x","a":[1,"}"]}`, true},
		{"escaped", `"a\"b\u00e9\ud83d\ude00"`, true},
		{"last", `null`, true},
		{"a", "", false},
		{"missing", "", false},
	}
	for _, c := range cases {
		raw, ok := Field(obj, c.key)
		if ok != c.ok || raw != c.want {
			t.Errorf("Field(%q) = %q, %v; want %q, %v", c.key, raw, ok, c.want, c.ok)
		}
		rawB, okB := Field([]byte(obj), c.key)
		if okB != c.ok || string(rawB) != c.want {
			t.Errorf("Field([]byte, %q) = %q, %v", c.key, rawB, okB)
		}
	}
	raw, _ := Field(obj, "escaped")
	if !StringEqual(raw, "a\"bé😀") {
		t.Errorf("StringEqual failed on escapes")
	}
	if StringEqual(raw, "a\"bé") || StringEqual(raw, "a\"bé😀x") {
		t.Errorf("StringEqual matched a prefix or extension")
	}
	if got, ok := AppendString(nil, raw); !ok || string(got) != "a\"bé😀" {
		t.Errorf("AppendString = %q, %v", got, ok)
	}
	if !HasEscapes(raw) {
		t.Errorf("HasEscapes = false")
	}
	n, _ := Field(obj, "n")
	if f, ok := Number(n); !ok || f != -125 {
		t.Errorf("Number = %v, %v", f, ok)
	}
	b, _ := Field(obj, "ok")
	if v, ok := Bool(b); !ok || !v {
		t.Errorf("Bool = %v, %v", v, ok)
	}
}

func TestFieldMalformed(t *testing.T) {
	for _, obj := range []string{"", "[]", `{"a"`, `{"a":`, `{"a":"x`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":{"b":1}`, `"a"`, `{"x":1,`} {
		if raw, ok := Field(obj, "b"); ok {
			t.Errorf("Field(%q, b) = %q, want not found", obj, raw)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	obj := `{"level":"info","msg":"request done","route":"/h\u0065alth","status":200}`
	allocs := testing.AllocsPerRun(100, func() {
		raw, ok := Field(obj, "route")
		if !ok || !StringEqual(raw, "/health") {
			t.Fatal("no match")
		}
		s, _ := Field(obj, "status")
		if f, ok := Number(s); !ok || f != 200 {
			t.Fatal("bad number")
		}
	})
	if allocs != 0 {
		t.Errorf("allocations per lookup = %v, want 0", allocs)
	}
}

// FuzzField checks Field against encoding/json on valid objects and that
// nothing panics on anything else.
func FuzzField(f *testing.F) {
	seeds := []string{
		`{"level":"info","route":"/health"}`,
		`{"a":{"b":[1,2,{"c":"}"}]},"b":"\"q\""}`,
		`{"\u0062":1,"b":2}`,
		`{"b":"\ud83d\ude00 \u00e9 \n"}`,
		` { "b" : -1.5e-3 } `,
		`{"b":null,"b":true}`,
		`{"x":"unterminated`,
		`{"b":"\ud800"}`,
		`[1,2]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), "b")
	}
	f.Fuzz(func(t *testing.T, obj []byte, key string) {
		raw, ok := Field(obj, key)
		if ok {
			_, _ = AppendString(nil, raw)
			_ = StringEqual(raw, key)
			_, _ = Number(raw)
		}
		if !json.Valid(obj) || !utf8.Valid(obj) || !utf8.ValidString(key) || hasDuplicateKeys(obj) {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(obj, &m) != nil {
			return // valid JSON but not an object
		}
		want, found := m[key]
		if found != ok {
			t.Fatalf("Field(%q, %q) found=%v, encoding/json found=%v", obj, key, ok, found)
		}
		if !found {
			return
		}
		// Numbers as written: one past float64's range is still a value.
		var a, b any
		if err := unmarshalUseNumber(raw, &a); err != nil {
			t.Fatalf("Field(%q, %q) = %q: not a JSON value: %v", obj, key, raw, err)
		}
		_ = unmarshalUseNumber(want, &b)
		aj, _ := json.Marshal(a)
		bj, _ := json.Marshal(b)
		if !bytes.Equal(aj, bj) {
			t.Fatalf("Field(%q, %q) = %s, encoding/json says %s", obj, key, aj, bj)
		}
		if s, isStr := b.(string); isStr {
			if !StringEqual(raw, s) {
				t.Fatalf("StringEqual(%q, %q) = false", raw, s)
			}
			if got, _ := AppendString(nil, raw); string(got) != s {
				t.Fatalf("AppendString(%q) = %q, want %q", raw, got, s)
			}
		}
	})
}

func hasDuplicateKeys(obj []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return false
	}
	n := 0
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return false
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
		n++
	}
	return n != len(m)
}

// unmarshalUseNumber is json.Unmarshal keeping numbers as json.Number.
func unmarshalUseNumber(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("more after the value: %v", err)
	}
	return nil
}
