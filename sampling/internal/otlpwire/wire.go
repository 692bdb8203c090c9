package otlpwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"unsafe"
)

// Wire types.
const (
	wtVarint     = 0
	wtI64        = 1
	wtLen        = 2
	wtStartGroup = 3
	wtEndGroup   = 4
	wtI32        = 5
)

var (
	errOverflow   = errors.New("otlpwire: varint overflows 64 bits")
	errNegLength  = errors.New("otlpwire: negative length")
	errFieldNum   = errors.New("otlpwire: illegal field number")
	errEndGroup   = errors.New("otlpwire: unexpected end of group")
	errWireType   = errors.New("otlpwire: illegal wire type")
	errIDLength   = errors.New("otlpwire: trace or span id of invalid length")
	errUnexpected = io.ErrUnexpectedEOF
)

// field is one field of a message as next reads it. All members are words:
// narrower ones cost store-forwarding stalls in the hot loops.
type field struct {
	tag        uint64 // num<<3 | wire type, with num as pdata reads it
	start, end int    // the value of a wtLen field
	val        uint64 // the value of a varint, fixed64 or fixed32 field
}

func (f field) num() int32 { return int32(f.tag >> 3) }
func (f field) typ() int8  { return int8(f.tag & 7) }

// next reads the field that starts at pos in b and returns it with the
// position after it. It accepts and rejects exactly what pdata's
// proto.ConsumeTag followed by a Consume* of the tag's wire type (or
// proto.ConsumeUnknown) does, so that known fields with a wrong wire type can
// be rejected by the caller afterwards with the same outcome.
func next(b []byte, pos int) (f field, _ int, err error) {
	// Most fields are short strings or messages with a one-byte tag.
	if pos+1 < len(b) {
		if t, n := b[pos], b[pos+1]; t < 0x80 && n < 0x80 && t&7 == wtLen && t >= 8 {
			if end := pos + 2 + int(n); end <= len(b) {
				return field{tag: uint64(t), start: pos + 2, end: end}, end, nil
			}
		}
	}
	var tag uint64
	if tag, pos, err = varint(b, pos); err != nil {
		return f, 0, err
	}
	// Truncating like pdata: a tag beyond 32 bits names a field modulo 2^32.
	num := int32(tag >> 3)
	if num <= 0 {
		return f, 0, errFieldNum
	}
	f.tag = uint64(num)<<3 | tag&7
	switch typ := int8(tag & 7); typ {
	case wtVarint:
		f.val, pos, err = varint(b, pos)
	case wtI64:
		if len(b)-pos < 8 {
			return f, 0, errUnexpected
		}
		f.val = binary.LittleEndian.Uint64(b[pos:])
		pos += 8
	case wtLen:
		f.start, f.end, err = length(b, pos)
		pos = f.end
	case wtI32:
		if len(b)-pos < 4 {
			return f, 0, errUnexpected
		}
		f.val = uint64(binary.LittleEndian.Uint32(b[pos:]))
		pos += 4
	default:
		pos, err = skipGroup(b, pos, typ)
	}
	return f, pos, err
}

func varint(b []byte, pos int) (uint64, int, error) {
	if pos < len(b) && b[pos] < 0x80 {
		return uint64(b[pos]), pos + 1, nil
	}
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, 0, errOverflow
		}
		if pos >= len(b) {
			return 0, 0, errUnexpected
		}
		c := b[pos]
		pos++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, pos, nil
		}
	}
}

// length reads the length prefix at pos and returns where the value starts and ends.
func length(b []byte, pos int) (start, end int, err error) {
	n, pos, err := varint(b, pos)
	if err != nil {
		return 0, 0, err
	}
	if int(n) < 0 {
		return 0, 0, errNegLength
	}
	if n > uint64(len(b)-pos) {
		return 0, 0, errUnexpected
	}
	return pos, pos + int(n), nil
}

// skipGroup skips an unknown field of a group or illegal wire type the way
// pdata's proto.ConsumeUnknown does, quirks included: inside a group it stops
// after the first scalar field, leaving the end-group tag to fail later.
func skipGroup(b []byte, pos int, typ int8) (int, error) {
	depth := 0
	for pos < len(b) {
		var err error
		switch typ {
		case wtVarint:
			_, pos, err = varint(b, pos)
			return pos, err
		case wtI64:
			if len(b)-pos < 8 {
				return 0, errUnexpected
			}
			return pos + 8, nil
		case wtLen:
			_, pos, err = length(b, pos)
			return pos, err
		case wtStartGroup:
			depth++
		case wtEndGroup:
			if depth == 0 {
				return 0, errEndGroup
			}
			depth--
		case wtI32:
			if len(b)-pos < 4 {
				return 0, errUnexpected
			}
			return pos + 4, nil
		default:
			return 0, errWireType
		}
		if depth == 0 {
			return pos, nil
		}
		var tag uint64
		if tag, pos, err = varint(b, pos); err != nil {
			return 0, err
		}
		if int32(tag>>3) <= 0 {
			return 0, errFieldNum
		}
		typ = int8(tag & 7)
	}
	return 0, errUnexpected
}

// mask is the set of field numbers nums, all below 64.
func mask(nums ...int32) uint64 {
	var m uint64
	for _, n := range nums {
		m |= 1 << n
	}
	return m
}

// checkKnown rejects f if it is one of a message's known fields: callers
// call it for fields of a wire type other than the one pdata requires.
func checkKnown(msg string, known uint64, f field) error {
	if n := f.num(); n < 64 && known>>n&1 != 0 {
		return wrongType(msg, f)
	}
	return nil
}

func wrongType(msg string, f field) error {
	return fmt.Errorf("otlpwire: %s field %d has the wrong wire type %d", msg, f.num(), f.typ())
}

// view returns b as a string without copying it.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// sov is the size of v as a varint.
func sov(v uint64) int {
	return (bits.Len64(v|1) + 6) / 7
}

func appendTag(b []byte, num int32, typ int8) []byte {
	return binary.AppendUvarint(b, uint64(num)<<3|uint64(typ))
}
