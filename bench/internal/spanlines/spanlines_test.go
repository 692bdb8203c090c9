package spanlines

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/internal/loadgen"
)

// TestCut checks every line is a whole request of at most max bytes
// (newline included) and the lines give back the export's spans in order,
// under their resource and scope.
func TestCut(t *testing.T) {
	td := loadgen.NewSpans(7).Requests(24, time.Now())
	// One span far longer than a line: it gets a line alone.
	big := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(50)
	big.Attributes().PutStr("big", strings.Repeat("x", 2*DefaultMax))
	// Text the scanner must step over inside strings.
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(3).Attributes().PutStr("q", `a"b\\c}]{[,\u00e9`)
	want, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{DefaultMax, 4096, 0} {
		out, n, err := Cut(td, max)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(out, []byte{'\n'})
		lines = lines[:len(lines)-1] // after the last newline
		if len(lines) != n {
			t.Fatalf("max %d: %d lines, Cut says %d", max, len(lines), n)
		}
		if max > 0 && n < 2 {
			t.Fatalf("max %d: %d line(s) for %d bytes", max, n, len(want))
		}
		got := ptrace.NewTraces()
		for i, l := range lines {
			var u ptrace.JSONUnmarshaler
			part, err := u.UnmarshalTraces(l)
			if err != nil {
				t.Fatalf("max %d: line %d: %v", max, i, err)
			}
			bigOne := part.SpanCount() == 1 && len(l) > max
			if max > 0 && len(l) > max && !bigOne {
				t.Errorf("max %d: line %d is %d bytes with %d spans", max, i, len(l), part.SpanCount())
			}
			if max > 0 && i+1 < len(lines) {
				// Greedy: the next line's first span would not have fit.
				var next struct {
					ResourceSpans []struct {
						ScopeSpans []struct {
							Spans []json.RawMessage `json:"spans"`
						} `json:"scopeSpans"`
					} `json:"resourceSpans"`
				}
				if err := json.Unmarshal(lines[i+1], &next); err != nil {
					t.Fatal(err)
				}
				first := next.ResourceSpans[0].ScopeSpans[0].Spans[0]
				if len(l)+1+len(first) <= max {
					t.Errorf("max %d: line %d (%d bytes) had room for the next span (%d bytes)", max, i, len(l), len(first))
				}
			}
			part.ResourceSpans().MoveAndAppendTo(got.ResourceSpans())
		}
		// Back in one resource and scope, in order: the same request.
		merged := ptrace.NewTraces()
		rs := got.ResourceSpans().At(0)
		rs.CopyTo(merged.ResourceSpans().AppendEmpty())
		dst := merged.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for i := 1; i < got.ResourceSpans().Len(); i++ {
			got.ResourceSpans().At(i).ScopeSpans().At(0).Spans().MoveAndAppendTo(dst)
		}
		b, err := ptraceotlp.NewExportRequestFromTraces(merged).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("max %d: the lines do not give back the export (%d vs %d bytes)", max, len(b), len(want))
		}
	}
}

// BenchmarkCut against BenchmarkMarshal: the load generator's cost of lines
// over one OTLP/JSON body (benchrun's export of 56 requests).
func BenchmarkCut(b *testing.B) {
	td := loadgen.NewSpans(7).Requests(56, time.Now())
	for b.Loop() {
		if _, _, err := Cut(td, DefaultMax); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	td := loadgen.NewSpans(7).Requests(56, time.Now())
	for b.Loop() {
		if _, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
