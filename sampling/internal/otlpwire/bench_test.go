package otlpwire

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/sidecarhq/sidecar/internal/loadgen"
)

// BenchmarkFilter keeps 1 span in 9 of a 504-span request, looking at what a
// sampler looks at.
func BenchmarkFilter(b *testing.B) {
	req := marshal(b, loadgen.NewSpans(1).Requests(56, time.Unix(1_700_000_000, 0)))
	var dst []byte
	var extra []byte
	i := 0
	keep := func(r *Resource, s *Span) (bool, []byte) {
		i++
		r.Attr("service.name")
		s.Attr("db.system")
		if i%9 != 0 {
			return false, nil
		}
		extra = AppendTraceState(extra[:0], "ot=th:e38e38e38e38e;rv:00000000000001")
		return true, extra
	}
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	for b.Loop() {
		out, _, _, err := Filter(dst, req, nil, keep)
		if err != nil {
			b.Fatal(err)
		}
		dst = out[:0]
	}
}

// BenchmarkUnmarshalPdata is what Filter saves: building pdata for the request.
func BenchmarkUnmarshalPdata(b *testing.B) {
	req := marshal(b, loadgen.NewSpans(1).Requests(56, time.Unix(1_700_000_000, 0)))
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ptraceotlp.NewExportRequest().UnmarshalProto(req); err != nil {
			b.Fatal(err)
		}
	}
}
