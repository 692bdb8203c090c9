package axiomtest

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// FuzzCountJSONArray: for every valid JSON array the count-only scanner
// agrees with encoding/json.
func FuzzCountJSONArray(f *testing.F) {
	for _, s := range []string{`[]`, `[1]`, `[{"a":"],[{"}]`, `[ {"a":[1,2,{}]} , "x\"]" , null ]`, `[1,]`, `[[[`, `["\\"]`, `[{"a":1}] x`, `["\u005d"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if firstByte(b) != '[' {
			return
		}
		n, err := countJSONArray(b)
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) != nil {
			return // invalid JSON: any answer but a panic is fine
		}
		if err != nil || n != len(elems) {
			t.Fatalf("countJSONArray(%q) = %d, %v; encoding/json finds %d", b, n, err, len(elems))
		}
	})
}

// FuzzIngest drives the ingest handler with arbitrary bodies: it must answer
// 200 or a 4xx with a JSON message, never panic, and store exactly what it
// reports as ingested.
func FuzzIngest(f *testing.F) {
	for _, s := range []string{ndjson2, `[{"a":1},2]`, `{"_time":1e400}`, `{"_time":"-1.5"}`, "{\"_sysTime\":1}\n\n[]", `[`, `{"a":"\ud800"}`} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
	}
	f.Add([]byte("a,b\n1,2\n\"x"), uint8(2))
	types := []string{"application/json", "application/x-ndjson", "text/csv"}
	f.Fuzz(func(t *testing.T, body []byte, typ uint8) {
		for _, countOnly := range []bool{false, true} {
			s := &Server{cfg: config{maxEvents: 50, countOnly: countOnly}, faults: faultQueues{}, datasets: map[string]*dataset{}, changed: make(chan struct{})}
			req := httptest.NewRequest(http.MethodPost, "/v1/datasets/d/ingest", bytes.NewReader(body))
			req.Header = ingestHeader(types[int(typ)%len(types)])
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			switch rec.Code {
			case 200:
				var st struct{ Ingested, Failed int }
				if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
					t.Fatalf("200 body %q: %v", rec.Body, err)
				}
				if st.Ingested != s.EventCount("d") || !countOnly && st.Ingested != len(s.Events("d")) {
					t.Fatalf("reported %d ingested, counted %d, stored %d", st.Ingested, s.EventCount("d"), len(s.Events("d")))
				}
				for _, ev := range s.Events("d") {
					if _, err := time.Parse(time.RFC3339Nano, ev["_time"].(string)); err != nil {
						t.Fatalf("stored _time %v", ev["_time"])
					}
				}
			case 400, 413:
				var msg struct{ Message string }
				if json.Unmarshal(rec.Body.Bytes(), &msg) != nil || msg.Message == "" || s.EventCount("d") != 0 {
					t.Fatalf("%d with body %q, %d events", rec.Code, rec.Body, s.EventCount("d"))
				}
			default:
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
	})
}

// FuzzParseEpoch checks epoch parsing against exact big-integer arithmetic.
func FuzzParseEpoch(f *testing.F) {
	for _, n := range []int64{0, 1, -1, 1700000000, 99999999999, 1e11, 1700000000123, 1e14, 1700000000123456, 1e17, 1700000000123456789, -1700000000123} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		got, ok := parseTimestamp(json.Number(strconv.FormatInt(n, 10)), "")
		if !ok {
			t.Fatalf("%d not parsed", n)
		}
		want := new(big.Int).Mul(big.NewInt(n), big.NewInt(epochUnit(math.Abs(float64(n)))))
		gotNs := new(big.Int).Add(new(big.Int).Mul(big.NewInt(got.Unix()), big.NewInt(1e9)), big.NewInt(int64(got.Nanosecond())))
		if want.Cmp(gotNs) != 0 {
			t.Fatalf("%d: got %v (%s ns), want %s ns", n, got, gotNs, want)
		}
	})
}

// FuzzParseTimestamp: arbitrary strings never panic, and RFC3339 output of
// any parsed time is parsed back to the same instant.
func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2024-01-02T03:04:05Z", "2024-01-02 03:04:05.5", "1700000000.25", "-0.5", "1e9", ".5", "-", "2024-01-02T03:04:05+0100", "NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, ok := parseTimestamp(s, "")
		if !ok || ts.Year() < 0 || ts.Year() > 9999 {
			return
		}
		back, ok := parseTimestamp(ts.UTC().Format(time.RFC3339Nano), "")
		if !ok || !back.Equal(ts) {
			t.Fatalf("%q -> %v -> %v %v", s, ts, back, ok)
		}
	})
}

// FuzzFastValues: whenever the fast decoder accepts a body, encoding/json
// accepts it too and decodes exactly the same values.
func FuzzFastValues(f *testing.F) {
	for _, s := range []string{ndjson2, `[{"a":1},2,"x",null,true,[]]`, `{"a":"\u00e9\ud83d\ude00","b":"\xff","c":-0.5e+3}`, `{"a":1}{"a":2}`, `truefalse`, `1 2`, `"a""b"`, `{"a":1,"a":2}`, `[1,]`, `[] `, `-01`, `1.`, "{\"a\":\"\t\"}", `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, array := range []bool{false, true} {
			if array && firstByte(b) != '[' {
				continue
			}
			fast, ok := fastValues(b, array, 100)
			if !ok {
				continue
			}
			slow, err := ndjsonValues(b, 100)
			if array {
				slow, err = arrayValues(b, 100)
			}
			if err != nil {
				t.Fatalf("array %v: fast accepted %q, encoding/json: %v", array, b, err)
			}
			if len(slow) == 0 && len(fast) == 0 {
				continue // nil and empty slices are equivalent here
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("array %v, %q:\nfast %#v\nslow %#v", array, b, fast, slow)
			}
		}
	})
}
