package otlpwire

import (
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// spanGen builds requests shaped like bench/internal/loadgen.Spans (which
// this package cannot import): per HTTP request one SERVER span and 8 Redis
// CLIENT spans with semantic-convention attributes, 1% failed.
type spanGen struct{ rng *rand.Rand }

func newSpanGen(seed uint64) *spanGen {
	return &spanGen{rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

var (
	benchRoutes   = []string{"/api/orders/", "/api/users/", "/api/checkout", "/api/products/", "/health"}
	benchCommands = []string{"get", "get", "get", "hgetall", "set", "expire", "mget", "incr"}
)

func (g *spanGen) requests(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	ra := rs.Resource().Attributes()
	ra.PutStr("service.name", "api")
	ra.PutStr("service.version", "1.42.0")
	ra.PutStr("deployment.environment.name", "production")
	ra.PutStr("telemetry.sdk.language", "nodejs")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("@opentelemetry/instrumentation-ioredis")
	end := pcommon.NewTimestampFromTime(time.Unix(1_700_000_000, 0))
	for range n {
		var tid pcommon.TraceID
		var sid pcommon.SpanID
		g.random(tid[:])
		g.random(sid[:])
		route := benchRoutes[g.rng.IntN(len(benchRoutes))]
		srv := ss.Spans().AppendEmpty()
		srv.SetTraceID(tid)
		srv.SetSpanID(sid)
		srv.SetName("GET " + route)
		srv.SetKind(ptrace.SpanKindServer)
		srv.SetStartTimestamp(end - pcommon.Timestamp(g.rng.IntN(40_000_000)))
		srv.SetEndTimestamp(end)
		a := srv.Attributes()
		a.PutStr("http.request.method", "GET")
		a.PutStr("url.path", route)
		a.PutStr("http.route", route)
		a.PutInt("http.response.status_code", 200)
		a.PutStr("user_agent.original", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36")
		a.PutStr("server.address", "api.internal")
		for _, cmd := range benchCommands {
			cs := ss.Spans().AppendEmpty()
			cs.SetTraceID(tid)
			var csid pcommon.SpanID
			g.random(csid[:])
			cs.SetSpanID(csid)
			cs.SetParentSpanID(sid)
			cs.SetName(cmd)
			cs.SetKind(ptrace.SpanKindClient)
			cs.SetStartTimestamp(end - pcommon.Timestamp(100_000+g.rng.IntN(900_000)))
			cs.SetEndTimestamp(end)
			ca := cs.Attributes()
			ca.PutStr("db.system", "redis")
			ca.PutStr("db.system.name", "redis")
			ca.PutStr("db.statement", cmd+" user:session:4f3a2b")
			ca.PutStr("server.address", "redis.internal")
			ca.PutInt("server.port", 6379)
			if g.rng.IntN(100) == 0 {
				cs.Status().SetCode(ptrace.StatusCodeError)
				cs.Status().SetMessage("ECONNRESET")
			}
		}
	}
	return td
}

func (g *spanGen) random(b []byte) {
	for i := range b {
		b[i] = byte(g.rng.Uint32())
	}
}

// BenchmarkFilter keeps 1 span in 9 of a 504-span request, looking at what a
// sampler looks at.
func BenchmarkFilter(b *testing.B) {
	req := marshal(b, newSpanGen(1).requests(56))
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
	req := marshal(b, newSpanGen(1).requests(56))
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ptraceotlp.NewExportRequest().UnmarshalProto(req); err != nil {
			b.Fatal(err)
		}
	}
}
