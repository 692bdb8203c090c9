package decode

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// checkHex16 holds hex16 to encoding/hex on 16 bytes.
func checkHex16(t *testing.T, src []byte) {
	t.Helper()
	v, bad := hex16(src)
	want, err := hex.DecodeString(string(src))
	if (bad == 0) != (err == nil) {
		t.Fatalf("%q: bad %#x, encoding/hex error %v", src, bad, err)
	}
	if got := binary.BigEndian.AppendUint64(nil, v); err == nil && !bytes.Equal(got, want) {
		t.Fatalf("%q: %x, encoding/hex %x", src, got, want)
	}
}

// FuzzHex16 holds hex16 to encoding/hex on 16 digits.
func FuzzHex16(f *testing.F) {
	for _, s := range []string{"4bf92f3577b34da6", "00f067aa0ba902b7", "ABCDEFabcdef0189",
		"0123456789abcdeg", "/:@AFGH`afgh0123", "\x80123456789abcde", "000000000000000 "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) != 16 {
			return
		}
		checkHex16(t, src)
	})
}

// TestHex16EveryByte puts each byte value at each position of 16 digits of
// both cases.
func TestHex16EveryByte(t *testing.T) {
	for _, base := range []string{"0123456789abcdef", "ABCDEF0123456789", "fedcba9876543210", "9aF0fA09aF0fA09a"} {
		for pos := range len(base) {
			for c := range 256 {
				src := []byte(base)
				src[pos] = byte(c)
				checkHex16(t, src)
			}
		}
	}
}
