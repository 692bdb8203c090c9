package decode

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// FuzzDecodeHex holds decodeHex to encoding/hex on ids of 16 and 32 digits.
func FuzzDecodeHex(f *testing.F) {
	for _, s := range []string{"4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "ABCDEFabcdef0189",
		"0123456789abcdeg", "/:@AFGH`afgh0123", "\x80123456789abcdef", "0000000000000000000000000000000 "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src)%8 != 0 || len(src) > 64 {
			return
		}
		got := make([]byte, len(src)/2)
		ok := decodeHex(got, src)
		want, err := hex.DecodeString(string(src))
		if ok != (err == nil) {
			t.Fatalf("%q: ok %v, encoding/hex error %v", src, ok, err)
		}
		if ok && !bytes.Equal(got, want) {
			t.Fatalf("%q: %x, encoding/hex %x", src, got, want)
		}
	})
}

// TestDecodeHexEveryByte puts each byte value at each position of an id.
func TestDecodeHexEveryByte(t *testing.T) {
	base := []byte("0123456789abcdefABCDEF0123456789")
	for pos := range base {
		for c := range 256 {
			src := bytes.Clone(base)
			src[pos] = byte(c)
			got := make([]byte, 16)
			ok := decodeHex(got, src)
			want, err := hex.DecodeString(string(src))
			if ok != (err == nil) || ok && !bytes.Equal(got, want) {
				t.Fatalf("byte %#x at %d: %x %v, encoding/hex %x %v", c, pos, got, ok, want, err)
			}
		}
	}
}
