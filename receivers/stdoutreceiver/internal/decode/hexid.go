package decode

import "encoding/binary"

// hex16 decodes the first sixteen bytes of src, hex digits of either case,
// into v, big-endian (the first digits are its highest bits), as
// encoding/hex does; bad is not zero if one of them is not a hex digit.
// Eight digits are checked and converted at a time, in a register:
// through encoding/hex's byte table a trace id cost 350 instructions.
func hex16(src []byte) (v, bad uint64) {
	_ = src[15]
	a, b := binary.BigEndian.Uint64(src), binary.BigEndian.Uint64(src[8:])
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	bad = (a | b) & highs
	la, lb := a|0x20*ones, b|0x20*ones // 'A'-'F' to 'a'-'f' (and no other byte into them)
	// Per byte, the high bit is set when it is >= '0' and not > '9' (or >=
	// 'a' and not > 'f'). A byte above 0x7f is bad already; below, the
	// additions carry out of none.
	const geDigit, gtDigit, geLetter, gtLetter = (0x80 - '0') * ones, (0x80 - '9' - 1) * ones, (0x80 - 'a') * ones, (0x80 - 'f' - 1) * ones
	letterA := (la + geLetter) &^ (la + gtLetter) & highs
	letterB := (lb + geLetter) &^ (lb + gtLetter) & highs
	hexA := (a+geDigit)&^(a+gtDigit) | letterA
	hexB := (b+geDigit)&^(b+gtDigit) | letterB
	bad |= (hexA & hexB & highs) ^ highs
	// A digit's value is its low nibble; a letter's is its low nibble + 9.
	// Bytes hold c0 c1 ... c7 (the first digit highest): pair them into
	// c0<<4|c1, then gather the four pairs into the low four bytes.
	a = a&(0x0f*ones) + (letterA>>7)*9
	b = b&(0x0f*ones) + (letterB>>7)*9
	a = (a>>4 | a) & 0x00ff00ff00ff00ff
	b = (b>>4 | b) & 0x00ff00ff00ff00ff
	a = (a>>8 | a) & 0x0000ffff0000ffff
	b = (b>>8 | b) & 0x0000ffff0000ffff
	return (a>>16|a)&0xffffffff<<32 | (b>>16|b)&0xffffffff, bad
}
