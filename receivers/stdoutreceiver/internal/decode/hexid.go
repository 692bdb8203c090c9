package decode

import "encoding/binary"

// decodeHex decodes src, 2*len(dst) hex digits of either case, into dst, as
// encoding/hex.Decode does for a trace or span id, and reports whether every
// digit was hex (dst is then partly written). Eight digits are checked and
// converted at a time: the ids of every pino line with a trace cost 350
// instructions through encoding/hex's byte table, a third of that here.
// len(src) must be a multiple of 8.
func decodeHex(dst, src []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(src) >= 8 {
		x := binary.LittleEndian.Uint64(src)
		if x&highs != 0 {
			return false
		}
		l := x | 0x20*ones // 'A'-'F' to 'a'-'f' (and no other byte into them)
		// Per byte, high bit set when it is >= '0', > '9', >= 'a' or > 'f' (no
		// byte is above 0x7f here, so the additions carry out of none of them).
		geDigit := (x + (0x80-'0')*ones) & highs
		gtDigit := (x + (0x80-'9'-1)*ones) & highs
		geLetter := (l + (0x80-'a')*ones) & highs
		gtLetter := (l + (0x80-'f'-1)*ones) & highs
		digit := geDigit &^ gtDigit
		letter := geLetter &^ gtLetter
		if digit|letter != highs {
			return false
		}
		// A digit's value is its low nibble; a letter's is its low nibble + 9.
		v := x&(0x0f*ones) + (letter>>7)*9
		// Bytes hold c0 c1 c2 ... (first digit lowest): pair them into
		// c0<<4|c1, then gather the four pairs into the low four bytes.
		v = (v<<4 | v>>8) & 0x00ff00ff00ff00ff
		v = (v | v>>8) & 0x0000ffff0000ffff
		v = v | v>>16
		binary.LittleEndian.PutUint32(dst, uint32(v))
		dst, src = dst[4:], src[8:]
	}
	return len(src) == 0
}
