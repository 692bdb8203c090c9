package decode

import (
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// wantInt is what parseInt must return: a plain integer of 1 to 18 digits
// (an optional minus aside) as strconv reads it, anything else not.
func wantInt(num string) (int64, bool) {
	digits := strings.TrimPrefix(num, "-")
	if len(digits) == 0 || len(digits) > 18 || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseInt(num, 10, 64)
	return v, err == nil
}

func checkParseInt(t *testing.T, num string) {
	t.Helper()
	v, ok := parseInt([]byte(num))
	if want, wantOK := wantInt(num); v != want || ok != wantOK {
		t.Fatalf("parseInt(%q) = %d %v, want %d %v", num, v, ok, want, wantOK)
	}
}

// TestParseIntLengths covers every length, the eight-digit steps' edges
// (8, 15, 16, 17 digits) among them, with and without a minus, with
// leading zeros and with each digit.
func TestParseIntLengths(t *testing.T) {
	for n := range 21 {
		for _, digits := range []string{
			strings.Repeat("9", n), strings.Repeat("0", n), strings.Repeat("0", max(n-1, 0)) + "1",
			("1234567890123456789012")[:n], ("9876543210987654321098")[:n], ("1000000000000000000000")[:n],
		} {
			checkParseInt(t, digits)
			checkParseInt(t, "-"+digits)
		}
	}
	checkParseInt(t, "1764504000000") // pino's time
	checkParseInt(t, "--1")
}

// TestParseIntEveryByte puts each byte that is not a digit at each position
// of numbers of 1 to 18 digits.
func TestParseIntEveryByte(t *testing.T) {
	for n := 1; n <= 18; n++ {
		base := ("123456789012345678")[:n]
		for pos := range n {
			for c := range 256 {
				num := []byte(base)
				num[pos] = byte(c)
				checkParseInt(t, string(num))
				checkParseInt(t, "-"+string(num))
			}
		}
	}
}

// FuzzParseInt holds parseInt to strconv.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"30", "1764504000000", "-1234567890123456", "12345678901234567", "0012345678", "1234567/", ":1234567"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, num string) { checkParseInt(t, num) })
}

// checkTimestamp holds epochMillis.timestamp to parseTimeValue, with c as
// it is (the last digits it read) and with none kept.
func checkTimestamp(t *testing.T, c *epochMillis, v string) {
	t.Helper()
	want, wantOK := pcommon.Timestamp(0), false
	if ts, _, ok := parseTimeValue([]byte(v)); ok {
		want, wantOK = pcommon.NewTimestampFromTime(ts), true
	}
	for _, c := range []*epochMillis{c, {}} {
		if got, ok := c.timestamp([]byte(v)); ok != wantOK || ok && got != want {
			t.Fatalf("timestamp(%q) = %d %v, want %d %v", v, got, ok, want, wantOK)
		}
	}
}

// TestTimestampEpochMillis covers the 13-byte values epochMillis reads
// itself (each byte that is not a digit at each position, a leading zero,
// the extremes, first digits read before and not), and values on either
// side of that length.
func TestTimestampEpochMillis(t *testing.T) {
	var c epochMillis
	for _, v := range []string{
		"1764504000000", "1764504099999", "1764504100000", "1764504000000", "1000000000000", "9999999999999",
		"0764504000000", "-764504000000", "1764504000000.5", "176450400000", "17645040000000", "1.764504e+12",
		`"1764504000000"`, `"2026-01-01T00:00:00Z"`, "",
	} {
		checkTimestamp(t, &c, v)
	}
	for pos := range 13 {
		for b := range 256 {
			v := []byte("1764504012345")
			checkTimestamp(t, &c, string(v))
			v[pos] = byte(b)
			checkTimestamp(t, &c, string(v))
		}
	}
}

// FuzzTimestamp holds epochMillis.timestamp to parseTimeValue, the values
// read one after another through one epochMillis.
func FuzzTimestamp(f *testing.F) {
	for _, s := range []string{"1764504000000", "0764504000000", "176450400000/", "1e12", `"2026-01-01T00:00:00.5Z"`} {
		f.Add(s)
	}
	var c epochMillis
	f.Fuzz(func(t *testing.T, v string) { checkTimestamp(t, &c, v) })
}
