package sampling

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestProbabilityToThreshold(t *testing.T) {
	cases := []struct {
		p   float64
		th  string
		adj float64
	}{
		{1, "0", 1},
		{0.5, "8", 2},
		{0.25, "c", 4},
		{1.0 / 128, "fe", 128},
		{0.1, "e666", 9.999390},
		{0.01, "fd70a", 99.997711},
		{0.001, "ffbe77", 1000.012875},
	}
	for _, c := range cases {
		th := probabilityToThreshold(c.p)
		if got := encodeThreshold(th); got != c.th {
			t.Errorf("p=%v: th %s, want %s", c.p, got, c.th)
		}
		if adj := adjustedCount(th); adj < c.adj-1e-5 || adj > c.adj+1e-5 {
			t.Errorf("p=%v: adjusted count %f, want %f", c.p, adj, c.adj)
		}
		back, ok := parseHex56(c.th, false)
		if !ok || back != th {
			t.Errorf("p=%v: parse(%s) = %x, want %x", c.p, c.th, back, th)
		}
	}
	for k := 0; k <= 56; k++ {
		if adj := adjustedCount(pow2Threshold(k)); adj != float64(uint64(1)<<k) {
			t.Errorf("2^-%d: adjusted count %v", k, adj)
		}
	}
}

// TestWithoutThreshold checks erasing th: other sub-keys and members stay,
// the changed ot member first; an ot member left empty goes.
func TestWithoutThreshold(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ot=th:f;rv:00000000000001", "ot=rv:00000000000001"},
		{"ot=th:f", ""},
		{"vendor=x,ot=th:f", "vendor=x"},
		{"a=1, ot=th:8;x:y ,b=2", "ot=x:y,a=1,b=2"},
		{"a=1", "a=1"},
		{"", ""},
	} {
		if got := withoutThreshold(c.in); got != c.want {
			t.Errorf("withoutThreshold(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTraceState(t *testing.T) {
	st := parseTraceState("foo=bar, ot=th:c;rv:9b8233f7e3a151 ,x=y")
	if !st.hasTh || st.th != 0xc0000000000000 || !st.hasRv || st.rv != 0x9b8233f7e3a151 {
		t.Errorf("parse: %+v", st)
	}
	for _, bad := range []string{"", "ot=th:C", "ot=th:", "ot=th:123456789012345", "ot=rv:123", "ot=rv:zz8233f7e3a151", "xot=th:8"} {
		st := parseTraceState(bad)
		if st.hasTh || st.hasRv {
			t.Errorf("parse(%q) = %+v, want nothing", bad, st)
		}
	}
	cases := []struct{ in, th, want string }{
		{"", "fe", "ot=th:fe"},
		{"foo=bar", "fe", "ot=th:fe,foo=bar"},
		{"foo=bar,ot=th:c;rv:9b8233f7e3a151;x:1, z=1", "fe", "ot=th:fe;rv:9b8233f7e3a151;x:1,foo=bar,z=1"},
		{"ot=rv:9b8233f7e3a151", "8", "ot=th:8;rv:9b8233f7e3a151"},
	}
	for _, c := range cases {
		if got := withThreshold(c.in, c.th); got != c.want {
			t.Errorf("withThreshold(%q, %s) = %q, want %q", c.in, c.th, got, c.want)
		}
	}
	r := traceRandomness(pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36})
	if r != 0xce929d0e0e4736 {
		t.Errorf("randomness %x", r)
	}
}

// FuzzTraceState checks that any tracestate parses without panicking and
// that rewriting th keeps everything else: the other ot sub-keys, the other
// members, and the th read back is the one written.
func FuzzTraceState(f *testing.F) {
	for _, s := range []string{
		"", "ot=th:c", "ot=th:fd70a;rv:9b8233f7e3a151", "vendor=x,ot=rv:9b8233f7e3a151, other=y",
		"ot=th:;rv:", "ot=th:123456789abcdef0", "ot=,ot=th:8", " ot=th:8 ,", "a=b,,c=d",
	} {
		f.Add(s, uint64(0xfe000000000000))
	}
	f.Fuzz(func(t *testing.T, ts string, th uint64) {
		before := parseTraceState(ts)
		th &= randomMask
		out := withThreshold(ts, encodeThreshold(th))
		after := parseTraceState(out)
		if !after.hasTh || after.th != th {
			t.Fatalf("withThreshold(%q, %x) = %q: th reads back as %x (%v)", ts, th, out, after.th, after.hasTh)
		}
		if after.hasRv != before.hasRv || after.rv != before.rv {
			t.Fatalf("withThreshold(%q) = %q lost or changed rv", ts, out)
		}
		if again := withThreshold(out, encodeThreshold(th)); again != out {
			t.Fatalf("rewriting is not idempotent: %q then %q", out, again)
		}
	})
}
