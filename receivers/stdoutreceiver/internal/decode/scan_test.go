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

// scanAfter scans b with an object that scanned a first (its keyShape
// kept a's keys, if it could), and with a fresh one, and reports where
// they differ.
func scanAfter(t *testing.T, a, b string) {
	t.Helper()
	var warm, fresh object
	scanObject([]byte(a), &warm)
	okWarm := scanObject([]byte(b), &warm)
	okFresh := scanObject([]byte(b), &fresh)
	if okWarm != okFresh {
		t.Fatalf("after %s, %s: object %v, fresh %v", a, b, okWarm, okFresh)
	}
	if !okFresh {
		return
	}
	if warm.known != fresh.known || warm.nSuperseded != fresh.nSuperseded {
		t.Fatalf("after %s, %s: known %v superseded %d, fresh %v %d", a, b, warm.known, warm.nSuperseded, fresh.known, fresh.nSuperseded)
	}
	for i := range fresh.members {
		if warm.isSuperseded(i) != fresh.isSuperseded(i) {
			t.Fatalf("after %s, %s: member %d superseded %v, fresh %v", a, b, i, warm.isSuperseded(i), fresh.isSuperseded(i))
		}
	}
}

// TestKeyShapeEveryKeyByte: a line whose keys are the last line's but for
// one byte of one key (every byte value at every position of every key,
// its quotes too), or a key one byte longer or shorter, is scanned as a
// fresh object scans it: the kept shape settles only a line with exactly
// its keys. The keys are of every length a shape holds (1-14 bytes, with
// quotes 3-16), one is longer (it holds no shape), and the last ends
// within 16 bytes of the line's end.
func TestKeyShapeEveryKeyByte(t *testing.T) {
	base := `{"level":30,"time":1764504000000,"":0,"a":1,"responseTime":2,"abcdefghijklmn":3,"trace_id":"x",` +
		`"ab":{"level":1},"pid":[1,"b"],"m":"é"}`
	short := `{"level":30,"time":1764504000000,"a":1,"m":"x"}`
	long := `{"level":30,"time":1764504000000,"abcdefghijklmno":1,"m":"x"}`
	for _, line := range []string{base, short, long} {
		var o object
		if !scanObject([]byte(line), &o) {
			t.Fatalf("%s: not an object", line)
		}
		for _, m := range o.members {
			for at := m.KeyStart; at < m.KeyEnd; at++ {
				b := []byte(line)
				for c := range 256 {
					b[at] = byte(c)
					scanAfter(t, line, string(b))
				}
			}
			// The key one byte longer (every byte) or shorter.
			end := m.KeyEnd - 1
			for c := range 256 {
				scanAfter(t, line, line[:end]+string(rune(c))+line[end:])
				scanAfter(t, line, line[:end]+string([]byte{byte(c)})+line[end:])
			}
			if end > m.KeyStart+1 {
				scanAfter(t, line, line[:end-1]+line[end:])
			}
		}
		scanAfter(t, line, line)
	}
	// The same keys in another order, one more or fewer, one repeated.
	for _, b := range []string{
		`{"time":1,"level":30,"":0,"a":1,"responseTime":2,"abcdefghijklmn":3,"trace_id":"x","ab":{},"pid":[],"m":"é"}`,
		`{"level":30,"time":1,"":0,"a":1,"responseTime":2,"abcdefghijklmn":3,"trace_id":"x","ab":{},"pid":[]}`,
		`{"level":30,"time":1,"":0,"a":1,"responseTime":2,"abcdefghijklmn":3,"trace_id":"x","ab":{},"pid":[],"m":"é","n":1}`,
		`{"level":30,"time":1,"":0,"a":1,"responseTime":2,"abcdefghijklmn":3,"trace_id":"x","ab":{},"pid":[],"level":40}`,
		`{"level":30,"time":1,"":0,"a":1,"responseTime":2,"abcdefghijklmn":3,"trace_id":"x","ab":{},"pid":[],"\u006d":1}`,
		`{ "level" :30,"time":1,"":0,"a":1,"responseTime":2,"abcdefghijklmn":3,"trace_id":"x","ab":{},"pid":[],"m":1}`,
	} {
		scanAfter(t, base, b)
	}
}

// FuzzKeyShape holds a line scanned after another (whose keys the object
// may keep) to the same line scanned by a fresh object.
func FuzzKeyShape(f *testing.F) {
	f.Add(`{"level":30,"time":1,"msg":"a"}`, `{"level":30,"time":2,"msg":"b"}`)
	f.Add(`{"level":30,"time":1,"msg":"a"}`, `{"level":30,"time":2,"msg":"b","msg":"c"}`)
	f.Add(`{"a":1,"b":2}`, `{"a":1,"c":2}`)
	f.Add(`{"a":1,"b":2}`, `{"a":1,"b\"":2}`)
	f.Add(`{"a":1,"b":2}`, `{"a":1,"\u0062":2}`)
	f.Add(`{"abcdefghijklmn":1}`, `{"abcdefghijklmo":1}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		scanAfter(t, a, b)
	})
}
