package loadgen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestPinoLinesAreRealisticJSON(t *testing.T) {
	gen := NewPino(1)
	now := time.UnixMilli(1_764_504_000_123)
	const n = 5000
	var total, errs int
	var line []byte
	for range n {
		line = gen.Append(line[:0], now)
		if line[len(line)-1] != '\n' || bytes.Count(line, []byte{'\n'}) != 1 {
			t.Fatalf("not exactly one line: %q", line)
		}
		var v struct {
			Level int    `json:"level"`
			Time  int64  `json:"time"`
			ReqID string `json:"reqId"`
			Req   struct{ Method, URL string }
			Res   struct {
				StatusCode int `json:"statusCode"`
			} `json:"res"`
			ResponseTime float64                 `json:"responseTime"`
			UserAgent    string                  `json:"userAgent"`
			Err          *struct{ Stack string } `json:"err"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("invalid JSON %q: %v", line, err)
		}
		if v.Time != now.UnixMilli() || v.ReqID == "" || v.Req.Method == "" || v.Res.StatusCode == 0 || v.UserAgent == "" {
			t.Fatalf("missing fields: %s", line)
		}
		if v.Err != nil {
			errs++
			if v.Level != 50 || !strings.Contains(v.Err.Stack, "\n    at ") {
				t.Fatalf("error line without level 50 and a stack: %s", line)
			}
		}
		total += len(line)
	}
	if avg := total / n; avg < 250 || avg > 380 {
		t.Fatalf("average line is %d bytes, want about 300", avg)
	}
	if errs < n/100 || errs > n/25 {
		t.Fatalf("%d error lines of %d, want about 2%%", errs, n)
	}
}

func TestAppendCRI(t *testing.T) {
	ts := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	got := string(AppendCRI(nil, ts, []byte("{\"a\":1}\n")))
	want := "2026-11-30T12:00:00.123456789Z stdout F {\"a\":1}\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestSpansShapedLikeAnIoredisService(t *testing.T) {
	end := time.Unix(1_764_504_000, 0)
	td := NewSpans(3).Requests(50, end)
	if td.SpanCount() != 50*SpansPerRequest {
		t.Fatalf("got %d spans, want %d", td.SpanCount(), 50*SpansPerRequest)
	}
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	servers, redis := 0, 0
	parents := map[[8]byte][16]byte{}
	for i := range spans.Len() {
		sp := spans.At(i)
		if !sp.EndTimestamp().AsTime().Equal(end) || sp.StartTimestamp() >= sp.EndTimestamp() {
			t.Fatalf("span %d times: %v..%v", i, sp.StartTimestamp(), sp.EndTimestamp())
		}
		switch sp.Kind() {
		case ptrace.SpanKindServer:
			servers++
			parents[sp.SpanID()] = sp.TraceID()
		case ptrace.SpanKindClient:
			redis++
			sys, _ := sp.Attributes().Get("db.system")
			if sys.Str() != "redis" {
				t.Fatalf("client span without db.system=redis: %v", sp.Attributes().AsRaw())
			}
			if tid, ok := parents[sp.ParentSpanID()]; !ok || tid != sp.TraceID() {
				t.Fatalf("Redis span %d is not a child of its request's SERVER span", i)
			}
		}
	}
	if servers != 50 || redis != 50*RedisSpansPerRequest {
		t.Fatalf("%d SERVER and %d CLIENT spans", servers, redis)
	}
}
