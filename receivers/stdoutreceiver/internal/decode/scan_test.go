package decode

import (
	"testing"
	"time"
)

// TestKeyNamesAreKeyIndex holds keyNames, whose filter bits decide which
// keys are looked up, to keyIndex's switch.
func TestKeyNamesAreKeyIndex(t *testing.T) {
	for k, name := range keyNames {
		if got := keyIndex([]byte(name)); got != k {
			t.Errorf("keyIndex(%q) = %d, want %d", name, got, k)
		}
		if filterBit([]byte(name))&knownKeyBits == 0 {
			t.Errorf("%q's bit is not in knownKeyBits", name)
		}
	}
}

// TestKnownKeysBesideLookalikes: keys whose filter bit a known key shares
// (reqId and message share time's, err and status @timestamp's) are not
// taken for known keys, and a known key after one is still found.
func TestKnownKeysBesideLookalikes(t *testing.T) {
	r := decodeOne(t, `{"reqId":"a","time":1764504000000,"err":"e","message":"m","status":7,"level":40,"stack":"s"}`)
	want := `{"reqId":"a","_time":1764504000000,"err":"e","message":"m","status":7,"level":"warn","stack":"s"}`
	if r.body != want {
		t.Errorf("body %s\nwant %s", r.body, want)
	}
	if got := r.lr.Timestamp().AsTime(); !got.Equal(time.UnixMilli(1764504000000)) {
		t.Errorf("timestamp %v", got)
	}
	if r.lr.SeverityText() != "warn" {
		t.Errorf("severity %q", r.lr.SeverityText())
	}
}

// TestEmptyKeysAreDuplicates: the empty key has one filter bit whether
// plainKeys reads it within its quotes or keySet.add from its text (after
// an escaped key), so a later empty key supersedes an earlier one either way.
func TestEmptyKeysAreDuplicates(t *testing.T) {
	for line, want := range map[string]string{
		`{"time":1764504000000,"":1,"a":2,"":3,"level":30}`:      `{"_time":1764504000000,"a":2,"":3,"level":"info"}`,
		`{"time":1764504000000,"":1,"\u0061":2,"":3,"level":30}`: `{"_time":1764504000000,"\u0061":2,"":3,"level":"info"}`,
		`{"time":1764504000000,"\u0061":1,"":2,"":3,"level":30}`: `{"_time":1764504000000,"\u0061":1,"":3,"level":"info"}`,
		`{"time":1764504000000,"":1,"":2,"\u0061":3,"level":30}`: `{"_time":1764504000000,"":2,"\u0061":3,"level":"info"}`,
	} {
		if r := decodeOne(t, line); r.body != want {
			t.Errorf("%s: body %s\nwant %s", line, r.body, want)
		}
	}
}
