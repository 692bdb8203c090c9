package decode

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendClosed(t *testing.T) {
	for _, c := range []struct{ cut, want string }{
		{`{"a":"xyz`, `{"a":"xyz"}`},
		{`{"a":1,"b":"x\`, `{"a":1,"b":"x"}`},
		{`{"a":1,"b":"x\u00`, `{"a":1,"b":"x"}`},
		{`{"a":1,"b":"x\u00e9`, `{"a":1,"b":"x\u00e9"}`},
		{`{"a":1,"b":12`, `{"a":1}`},
		{`{"a":1,"b":tr`, `{"a":1}`},
		{`{"a":1,"b":true`, `{"a":1}`},
		{`{"a":1,"b":true,`, `{"a":1,"b":true}`},
		{`{"a":1,"b"`, `{"a":1}`},
		{`{"a":1,"b":`, `{"a":1}`},
		{`{"a":1,"bk`, `{"a":1}`},
		{`{"a":{"b":[1,{"c":"de`, `{"a":{"b":[1,{"c":"de"}]}}`},
		{`{"a":{"b":[1,{`, `{"a":{"b":[1,{}]}}`},
		{`{"a":[`, `{"a":[]}`},
		{`{"a":[1,2`, `{"a":[1]}`},
		{`{`, `{}`},
		{` { "a" : [ "x" , "y`, ` { "a" : [ "x" , "y"]}`},
	} {
		got, ok := appendClosed(nil, []byte(c.cut))
		if !ok || string(got) != c.want {
			t.Errorf("appendClosed(%s) = %s, %v; want %s", c.cut, got, ok, c.want)
		}
	}
	for _, notCut := range []string{`{"a":1}`, `[1,2`, `plain`, `{"a" 1`, `{"a":"x` + "\x01", `{"a":1}}`} {
		if got, ok := appendClosed(nil, []byte(notCut)); ok {
			t.Errorf("appendClosed(%q) = %s, want not ok", notCut, got)
		}
	}
}

// Every cut of real lines closes into a JSON object whose members are
// those of the line that were complete at the cut, strings cut short.
func TestAppendClosedEveryCut(t *testing.T) {
	for _, line := range append(pinoLines[:len(pinoLines):len(pinoLines)],
		`{"a":{"b":[1,{"c":"d\"e\\u00e9 \ud83d\ude00"}],"n":-1.5e3},"z":[[],{}],"é":"ü😀"}`) {
		for n := 1; n < len(line); n++ {
			cut := trimPartialRune([]byte(line[:n]))
			got, ok := appendClosed(nil, cut)
			if !ok {
				t.Fatalf("cut %q not closed", cut)
			}
			if !json.Valid(got) || !utf8.Valid(got) || !strings.HasPrefix(string(got), "{") {
				t.Fatalf("cut %q closed into %q: not a JSON object", cut, got)
			}
			var m map[string]any
			if err := json.Unmarshal(got, &m); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Duplicates are found on both sides of the switch to the hash table.
func TestDuplicateKeysInLongObjects(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"k0":"first"`)
	for i := 1; i < 3*smallKeys; i++ {
		fmt.Fprintf(&b, `,"k%d":%d`, i, i)
	}
	fmt.Fprintf(&b, `,"k0":"last","k5":"five","k%d":"late"}`, 2*smallKeys)
	r := decodeOne(t, b.String())
	m := parseJSON(t, r.body)
	if m["k0"] != "last" || m["k5"] != "five" || m[fmt.Sprintf("k%d", 2*smallKeys)] != "late" || topLevelMembers(t, r.body) != len(m) {
		t.Fatalf("duplicates not resolved: %s", r.body)
	}
}
