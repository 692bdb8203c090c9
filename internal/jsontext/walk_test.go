package jsontext

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

// stops reports whether walk's string loop stops at c.
func stops(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }

// firstStop is the index of the first byte of word that stops the string
// loop, or 8.
func firstStop(word [8]byte) int {
	for k, c := range word {
		if stops(c) {
			return k
		}
	}
	return 8
}

func checkStopBytes(t *testing.T, word [8]byte) {
	t.Helper()
	got := 8
	if stop := stopBytes(binary.LittleEndian.Uint64(word[:])); stop != 0 {
		got = bits.TrailingZeros64(stop) / 8
	}
	if want := firstStop(word); got != want {
		t.Fatalf("stopBytes(%q) stops at %d, want %d", word, got, want)
	}
}

// TestStopBytes: the lowest byte stopBytes flags is the first that stops the
// string loop, for every byte at every position, every pair of bytes at
// every two positions among plain ones, and random words.
func TestStopBytes(t *testing.T) {
	for a := range 256 {
		for p := range 8 {
			word := [8]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}
			word[p] = byte(a)
			checkStopBytes(t, word)
			for b := range 256 {
				for q := p + 1; q < 8; q++ {
					word[q] = byte(b)
					checkStopBytes(t, word)
					word[q] = 'a'
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 18 {
		var word [8]byte
		binary.LittleEndian.PutUint64(word[:], r.Uint64())
		checkStopBytes(t, word)
	}
}

// TestMembersKeys holds Members to encoding/json on keys of every length up
// to three words, plain or with a byte that takes the string loop's slow way
// (an escape, UTF-8, a control character, an early quote) at every position,
// and with the text ending right after the object or long after, so that
// keys end before, at and past the end of the first eight bytes and near
// the end of the text; the colon right after the key's quote (in the key's
// word, or past it), after whitespace, or another byte in its place. Every
// prefix of each text is held to it too.
func TestMembersKeys(t *testing.T) {
	specials := []string{``, `\"`, `\\`, `\u00e9`, `\n`, "é", "\u20ac", "\x01", `"`, `\`, "\xc3"}
	for n := range 25 {
		for _, sp := range specials {
			for at := 0; at <= n; at++ {
				if sp == `` && at > 0 {
					break
				}
				key := strings.Repeat("k", at) + sp + strings.Repeat("k", n-at)
				for _, text := range []string{
					`{"` + key + `":1}`,
					`{"` + key + `":"v"}`,
					`{"a":1,"` + key + `":[1,{"` + key + `":2}],"` + key + `":"` + strings.Repeat("v", 20) + `"}`,
					`{ "` + key + `" : 1 , "b":2}`,
					`{"` + key + "\"\t:1}",
					`{"` + key + `",1}`,
					`{"` + key + `"` + "\x00:1}",
				} {
					for end := 1; end <= len(text); end++ {
						checkMembers(t, []byte(text[:end]))
					}
				}
			}
		}
	}
}

// TestNonDigits: the lowest byte nonDigits flags is the first that is not a
// digit, for every byte at every position and every pair of bytes at every
// two positions among digits.
func TestNonDigits(t *testing.T) {
	check := func(word [8]byte) {
		got, want := 8, 8
		if other := nonDigits(binary.LittleEndian.Uint64(word[:])); other != 0 {
			got = bits.TrailingZeros64(other) / 8
		}
		for k, c := range word {
			if c < '0' || c > '9' {
				want = k
				break
			}
		}
		if got != want {
			t.Fatalf("nonDigits(%q) stops at %d, want %d", word, got, want)
		}
	}
	for a := range 256 {
		for p := range 8 {
			word := [8]byte{'0', '1', '2', '3', '4', '5', '6', '9'}
			word[p] = byte(a)
			check(word)
			for b := range 256 {
				for q := p + 1; q < 8; q++ {
					old := word[q]
					word[q] = byte(b)
					check(word)
					word[q] = old
				}
			}
		}
	}
}
