package forward

// Bounded msgpack reads on top of msgp.Reader: a string's length without its
// bytes, short strings and keys that are valid until the next read, and
// skipping a value as a bad-frame error.

import (
	"encoding/binary"
	"fmt"

	"github.com/tinylib/msgp/msgp"
)

func skipValue(r *msgp.Reader) error {
	if err := r.Skip(); err != nil {
		return badFrame("%v", err)
	}
	return nil
}

// readKey returns a key of at most maxKeyBytes (valid until the next read),
// or nil with the key consumed when it is longer, empty or not a string.
func readKey(r *msgp.Reader) ([]byte, error) {
	t, err := r.NextType()
	if err != nil {
		return nil, badFrame("key: %v", err)
	}
	if t != msgp.StrType && t != msgp.BinType {
		return nil, skipValue(r)
	}
	n, err := readBinOrStrHeader(r)
	if err != nil {
		return nil, badFrame("key: %v", err)
	}
	if n == 0 || n > maxKeyBytes {
		if _, err := r.R.Skip(int(n)); err != nil {
			return nil, badFrame("key: %v", err)
		}
		return nil, nil
	}
	b, err := r.R.Next(int(n))
	if err != nil {
		return nil, badFrame("key: %v", err)
	}
	return b, nil
}

// readBinOrStrHeader reads the length of a str or bin value.
func readBinOrStrHeader(r *msgp.Reader) (uint32, error) {
	lead, err := r.R.PeekByte()
	if err != nil {
		return 0, err
	}
	hdr := strHeaderSize(lead)
	if hdr == 0 {
		return 0, fmt.Errorf("want str or bin, got 0x%02x", lead)
	}
	p, err := r.R.Next(hdr)
	if err != nil {
		return 0, err
	}
	return strLen(p), nil
}

// strHeaderSize is the size of the header of a str or bin value that
// starts with lead, 0 for other types.
func strHeaderSize(lead byte) int {
	if lead&0xe0 == 0xa0 { // fixstr
		return 1
	}
	switch lead {
	case 0xd9, 0xc4: // str8, bin8
		return 2
	case 0xda, 0xc5: // str16, bin16
		return 3
	case 0xdb, 0xc6: // str32, bin32
		return 5
	}
	return 0
}

// strLen is the length a str or bin header p (of strHeaderSize) gives.
func strLen(p []byte) uint32 {
	switch len(p) {
	case 1:
		return uint32(p[0] & 0x1f)
	case 2:
		return uint32(p[1])
	case 3:
		return uint32(binary.BigEndian.Uint16(p[1:]))
	}
	return binary.BigEndian.Uint32(p[1:])
}

// fixStr is bufferedStr for a fixstr only (as keys and short values are),
// small enough to be inlined.
func fixStr(p []byte) (s []byte, size int, ok bool) {
	if len(p) == 0 || p[0]&0xe0 != 0xa0 || int(p[0]&0x1f) >= len(p) {
		return nil, 0, false
	}
	size = int(p[0]&0x1f) + 1
	return p[1:size], size, true
}

// bufferedStr returns the str or bin value at the start of p and its size
// with the header; ok is false for another type or a value p does not hold
// whole.
func bufferedStr(p []byte) (s []byte, size int, ok bool) {
	if len(p) == 0 {
		return nil, 0, false
	}
	hdr := strHeaderSize(p[0])
	if hdr == 0 || len(p) < hdr {
		return nil, 0, false
	}
	n := int(strLen(p[:hdr]))
	if len(p)-hdr < n {
		return nil, 0, false
	}
	return p[hdr : hdr+n], hdr + n, true
}

// buffered returns what r's buffer holds, without reading.
func buffered(r *msgp.Reader) []byte {
	b, _ := r.R.Peek(r.R.Buffered())
	return b
}

// readShortString reads a str/bin of at most limit bytes; the result is
// valid until the next read.
func readShortString(r *msgp.Reader, limit int) ([]byte, error) {
	n, err := readBinOrStrHeader(r)
	if err != nil {
		return nil, err
	}
	if int(n) > limit {
		return nil, fmt.Errorf("string of %d bytes, limit %d", n, limit)
	}
	return r.R.Next(int(n))
}
