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
	if lead&0xe0 == 0xa0 { // fixstr
		_, err := r.R.Skip(1)
		return uint32(lead & 0x1f), err
	}
	var hdr int
	switch lead {
	case 0xd9, 0xc4: // str8, bin8
		hdr = 2
	case 0xda, 0xc5: // str16, bin16
		hdr = 3
	case 0xdb, 0xc6: // str32, bin32
		hdr = 5
	default:
		return 0, fmt.Errorf("want str or bin, got 0x%02x", lead)
	}
	p, err := r.R.Next(hdr)
	if err != nil {
		return 0, err
	}
	switch hdr {
	case 2:
		return uint32(p[1]), nil
	case 3:
		return uint32(binary.BigEndian.Uint16(p[1:])), nil
	}
	return binary.BigEndian.Uint32(p[1:]), nil
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
