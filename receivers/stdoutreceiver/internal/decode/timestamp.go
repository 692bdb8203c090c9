package decode

import (
	"encoding/binary"
	"math"
	"strconv"
	"time"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// bytesToString views b as a string without copying, for parsers that do
// not retain their argument.
func bytesToString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// epochUnit tells which unit a numeric timestamp is in, judged by magnitude:
// seconds (zap's float "ts", unix-time loggers), milliseconds (pino, Date.now),
// microseconds or nanoseconds. Any date between 1973 and 5138 is judged right.
type epochUnit int

const (
	unitSeconds epochUnit = iota
	unitMillis
	unitMicros
	unitNanos
)

func unitOf(f float64) epochUnit {
	a := math.Abs(f)
	switch {
	case a < 1e11:
		return unitSeconds
	case a < 1e14:
		return unitMillis
	case a < 1e17:
		return unitMicros
	}
	return unitNanos
}

// parseInt parses a JSON number that is a plain integer (pino's epoch
// milliseconds, numeric levels) without the cost of ParseFloat.
func parseInt(num []byte) (int64, bool) {
	neg := len(num) > 0 && num[0] == '-'
	if neg {
		num = num[1:]
	}
	var v int64
	switch n := len(num); {
	case 8 <= n && n <= 16: // epoch milliseconds have 13
		hi, okHi := eightDigits(binary.LittleEndian.Uint64(num), 0)
		// The last eight bytes, less the 16-n that hi has read.
		lo, okLo := eightDigits(binary.LittleEndian.Uint64(num[n-8:]), 16-n)
		if !okHi || !okLo {
			return 0, false
		}
		v = int64(hi*pow10[n-8] + lo)
	case n == 0 || n > 18:
		return 0, false
	default:
		for _, c := range num {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = 10*v + int64(c-'0')
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}

// eightDigits returns the value of the decimal digits x holds (the first in
// its lowest byte), leaving out the first skip (0 to 8), and whether all
// eight bytes are digits. The digits are combined in pairs, then fours,
// then eights, in one register: three multiplications instead of eight.
func eightDigits(x uint64, skip int) (uint64, bool) {
	const ones = 0x0101010101010101
	// '0'..'9' are 0x30..0x39: high nibble 3, and still 3 after adding 6.
	if x&(0xf0*ones) != 0x30*ones || (x+0x06*ones)&(0xf0*ones) != 0x30*ones {
		return 0, false
	}
	x = (x - 0x30*ones) &^ (1<<(8*skip) - 1) // skip is at most 8: a shift by 64 is 0 in Go
	x = (x*10 + x>>8) & 0x00ff00ff00ff00ff   // per pair: 10*first + second
	x = (x*100 + x>>16) & 0x0000ffff0000ffff
	return (x*10000 + x>>32) & 0xffffffff, true
}

// parseNumberTime parses a JSON number as an epoch timestamp.
func parseNumberTime(num []byte) (time.Time, epochUnit, bool) {
	if v, ok := parseInt(num); ok {
		switch u := unitOf(float64(v)); u {
		case unitSeconds:
			return time.Unix(v, 0), u, true
		case unitMillis:
			return time.UnixMilli(v), u, true
		case unitMicros:
			return time.UnixMicro(v), u, true
		default:
			return time.Unix(0, v), u, true
		}
	}
	f, err := strconv.ParseFloat(bytesToString(num), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return time.Time{}, 0, false
	}
	u := unitOf(f)
	var ns float64
	switch u {
	case unitSeconds:
		ns = f * 1e9
	case unitMillis:
		ns = f * 1e6
	case unitMicros:
		ns = f * 1e3
	default:
		ns = f
	}
	if ns > math.MaxInt64 || ns < math.MinInt64 {
		return time.Time{}, 0, false
	}
	// Whole seconds and fractions are split so float rounding does not blur
	// the nanoseconds of ordinary dates.
	if u == unitSeconds {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e9))), u, true
	}
	return time.Unix(0, int64(ns)), u, true
}

// parseStringTime parses an RFC 3339 / ISO 8601 date-time (the format of
// bunyan, winston, logrus, slog and ECS) given as a JSON string with quotes.
func parseStringTime(v []byte) (time.Time, bool) {
	if len(v) < 2 || v[0] != '"' {
		return time.Time{}, false
	}
	s := bytesToString(v[1 : len(v)-1])
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// epochMillis reads the timestamps of the JSON values an event keeps
// (`time`, `_time`). Epoch milliseconds of 13 digits (pino's `time`: from
// 2001 to 2286) are read straight into nanoseconds, without
// parseTimeValue's time.Time (~80 instructions a pino line); they are
// milliseconds by any unit parseNumberTime would judge (a first digit of 0
// is not JSON, and the scan has checked it is). Their first eight digits
// change every 100 seconds only, so the last ones read are kept: a line of
// the same 100 seconds converts only its last five digits.
type epochMillis struct {
	word, hi uint64 // the first eight digits' bytes and their value (word 0: none yet)
}

// timestamp is the timestamp v says, if it says one.
func (c *epochMillis) timestamp(v []byte) (pcommon.Timestamp, bool) {
	if len(v) == 13 && v[0] != '0' {
		word := binary.LittleEndian.Uint64(v)
		if word != c.word {
			if hi, ok := eightDigits(word, 0); ok {
				c.word, c.hi = word, hi
			}
		}
		lo, okLo := eightDigits(binary.LittleEndian.Uint64(v[5:]), 3) // the last five digits
		if word == c.word && okLo {
			return pcommon.Timestamp((c.hi*1e5 + lo) * 1e6), true
		}
	}
	t, _, ok := parseTimeValue(v)
	return pcommon.NewTimestampFromTime(t), ok
}

// parseTimeValue parses a JSON value used as a timestamp.
func parseTimeValue(v []byte) (time.Time, epochUnit, bool) {
	if len(v) == 0 {
		return time.Time{}, 0, false
	}
	if v[0] == '"' {
		t, ok := parseStringTime(v)
		return t, unitMillis, ok
	}
	if v[0] == '-' || '0' <= v[0] && v[0] <= '9' {
		return parseNumberTime(v)
	}
	return time.Time{}, 0, false
}
