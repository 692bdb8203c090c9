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
