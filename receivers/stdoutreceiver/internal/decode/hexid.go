package decode

import (
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// parseTraceID decodes 32 hex digits of either case into a trace id, as
// encoding/hex does, and reports whether they all are hex digits. Eight
// digits are checked and converted at a time, in a register, the four
// words in one straight run (through encoding/hex's byte table a trace id
// cost 350 instructions, through a call per sixteen digits ~260).
func parseTraceID(src *[32]byte) (id pcommon.TraceID, ok bool) {
	a, badA := hexWord(binary.LittleEndian.Uint64(src[0:8]))
	b, badB := hexWord(binary.LittleEndian.Uint64(src[8:16]))
	c, badC := hexWord(binary.LittleEndian.Uint64(src[16:24]))
	d, badD := hexWord(binary.LittleEndian.Uint64(src[24:32]))
	binary.LittleEndian.PutUint64(id[:8], uint64(uint32(a))|b<<32)
	binary.LittleEndian.PutUint64(id[8:], uint64(uint32(c))|d<<32)
	return id, badA|badB|badC|badD == 0
}

// parseSpanID is parseTraceID for a span id's 16 digits.
func parseSpanID(src *[16]byte) (id pcommon.SpanID, ok bool) {
	a, badA := hexWord(binary.LittleEndian.Uint64(src[0:8]))
	b, badB := hexWord(binary.LittleEndian.Uint64(src[8:16]))
	binary.LittleEndian.PutUint64(id[:], uint64(uint32(a))|b<<32)
	return id, badA|badB == 0
}

// hexWord decodes the eight hex digits x holds, the first in its lowest
// byte (a little-endian load), into the four bytes they spell, in the low
// half of v in the same order (its high half is not cleared); bad is not
// zero if one of them is not a hex digit.
func hexWord(x uint64) (v, bad uint64) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// Per byte, the high bit is set when it is >= '0' and not > '9' (or,
	// with 'A'-'F' made 'a'-'f' and no other byte into them, >= 'a' and
	// not > 'f'). A byte above 0x7f is bad already; below, the additions
	// carry out of none.
	const geDigit, gtDigit, geLetter, gtLetter = (0x80 - '0') * ones, (0x80 - '9' - 1) * ones, (0x80 - 'a') * ones, (0x80 - 'f' - 1) * ones
	l := x | 0x20*ones
	letter := (l + geLetter) &^ (l + gtLetter) & highs
	digit := (x + geDigit) &^ (x + gtDigit)
	bad = (x | ^(digit | letter)) & highs
	// A digit's value is its low nibble; a letter's is its low nibble + 9.
	// Bytes hold c0 c1 ... c7: pair them into c0<<4|c1, then gather the
	// four pairs into the low four bytes.
	x = x&(0x0f*ones) + (letter>>7)*9
	x = (x<<4 | x>>8) & 0x00ff00ff00ff00ff
	x = (x | x>>8) & 0x0000ffff0000ffff
	return x | x>>16, bad
}
