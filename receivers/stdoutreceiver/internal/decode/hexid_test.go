package decode

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// checkHexID holds parseTraceID and parseSpanID to encoding/hex on 32
// and 16 bytes.
func checkHexID(t *testing.T, src []byte) {
	t.Helper()
	want, err := hex.DecodeString(string(src))
	var got []byte
	var ok bool
	switch len(src) {
	case 32:
		id, okID := parseTraceID((*[32]byte)(src))
		got, ok = id[:], okID
	case 16:
		id, okID := parseSpanID((*[16]byte)(src))
		got, ok = id[:], okID
	default:
		t.Fatalf("%d digits", len(src))
	}
	if ok != (err == nil) {
		t.Fatalf("%q: ok %v, encoding/hex error %v", src, ok, err)
	}
	if ok && !bytes.Equal(got, want) {
		t.Fatalf("%q: %x, encoding/hex %x", src, got, want)
	}
}

// FuzzHexID holds the id parsers to encoding/hex on 16 and 32 bytes.
func FuzzHexID(f *testing.F) {
	for _, s := range []string{"4bf92f3577b34da6", "00f067aa0ba902b7", "ABCDEFabcdef0189",
		"0123456789abcdeg", "/:@AFGH`afgh0123", "\x80123456789abcde", "000000000000000 ",
		"4bf92f3577b34da6a3ce929d0e0e4736", "4bf92f3577b34da6a3ce929d0e0e473G"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) != 16 && len(src) != 32 {
			return
		}
		checkHexID(t, src)
	})
}

// TestHexIDEveryByte puts each byte value at each position of 16 and 32
// digits of both cases.
func TestHexIDEveryByte(t *testing.T) {
	for _, base := range []string{"0123456789abcdef", "ABCDEF0123456789", "fedcba9876543210", "9aF0fA09aF0fA09a",
		"0123456789abcdefABCDEF0123456789", "fedcba98765432109aF0fA09aF0fA09a"} {
		for pos := range len(base) {
			for c := range 256 {
				src := []byte(base)
				src[pos] = byte(c)
				checkHexID(t, src)
			}
		}
	}
}
