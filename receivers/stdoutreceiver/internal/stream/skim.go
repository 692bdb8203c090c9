package stream

import "unicode/utf8"

// A Skimmer lets a transport keep the structure of a line longer than its
// limit in bounded memory. The transport keeps the line's first
// max_line_bytes as usual; the bytes after them go through Overflow, which
// drops the rest of the string being written at the cut and keeps what
// follows (the closing brackets, later members such as pino's `msg`), each
// later string value cut to SkimStringBytes and the whole to
// SkimOverflowBytes. For the usual over-long line, one huge value, the line
// stays one JSON object with every member and only the longest value cut.
//
// Only a line that starts as a JSON object is skimmed; of any other line
// only the head is kept. It follows JSON's lexical structure only (strings
// and escapes): the decoder closes whatever it keeps into JSON again if
// need be, and the line is marked truncated either way.
type Skimmer struct {
	off      bool // not a JSON object: nothing past the head is kept
	inString bool
	escape   int  // bytes of an escape sequence still to come
	skipping bool // dropping the current string's content
	strBytes int  // content bytes kept of the current string
	kept     int  // overflow bytes kept
}

const (
	// SkimStringBytes is how much of each string that starts after the cut
	// is kept.
	SkimStringBytes = 1 << 10
	// SkimOverflowBytes caps what is kept after the cut.
	SkimOverflowBytes = 64 << 10
)

// Start reads the kept head of the line and returns how many of its bytes
// to keep: fewer when it ends inside an escape sequence or a UTF-8
// character of a string, which would otherwise be cut in two.
func (s *Skimmer) Start(head []byte) int {
	*s = Skimmer{}
	i := 0
	for i < len(head) && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n') {
		i++
	}
	if i == len(head) || head[i] != '{' {
		s.off = true
		return len(head)
	}
	clean := 0
	for i, c := range head {
		s.step(c)
		if !s.inString || s.escape == 0 && (i+1 == len(head) || runeStart(head[i+1])) {
			clean = i + 1
		}
	}
	if s.inString { // the value being written at the cut: drop its rest
		s.skipping = true
		// A character the cut split in two is dropped whole.
		for k := 1; k < utf8.UTFMax && k <= clean; k++ {
			if c := head[clean-k]; c < 0x80 {
				break
			} else if c >= 0xC0 {
				if !utf8.FullRune(head[clean-k : clean]) {
					clean -= k
				}
				break
			}
		}
	}
	return clean
}

func runeStart(c byte) bool { return c < 0x80 || c >= 0xC0 }

// step advances the lexical state over c.
func (s *Skimmer) step(c byte) {
	switch {
	case s.escape > 0:
		if s.escape == 1 && c == 'u' {
			s.escape = 5
		}
		s.escape--
	case !s.inString:
		if c == '"' {
			s.inString, s.strBytes, s.skipping = true, 0, false
		}
	case c == '\\':
		s.escape = 1
	case c == '"':
		s.inString = false
	}
}

// Overflow appends to dst the bytes of b (the line past the kept head, in
// order, in any number of calls) that are kept.
func (s *Skimmer) Overflow(dst, b []byte) []byte {
	if s.off {
		return dst
	}
	for _, c := range b {
		if s.kept >= SkimOverflowBytes {
			return dst
		}
		wasIn, wasEscape := s.inString, s.escape > 0
		s.step(c)
		switch {
		case !wasIn || !s.inString: // structure, an opening or closing quote
			s.skipping = false
		case s.skipping:
			continue
		case !wasEscape && s.strBytes >= SkimStringBytes && (c == '\\' || runeStart(c)):
			s.skipping = true // an escape begun here is still followed
			continue
		default:
			s.strBytes++
		}
		dst = append(dst, c)
		s.kept++
	}
	return dst
}
