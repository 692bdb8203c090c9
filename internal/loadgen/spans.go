package loadgen

import (
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// RedisSpansPerRequest is how many Redis CLIENT spans each request makes.
const RedisSpansPerRequest = 8

// SpansPerRequest is the spans of one request: its SERVER span and its Redis spans.
const SpansPerRequest = 1 + RedisSpansPerRequest

var redisCommands = []string{"get", "get", "get", "hgetall", "set", "expire", "mget", "incr"}

// Spans builds OTLP traces shaped like an instrumented HTTP service using
// ioredis: per request one SERVER span and RedisSpansPerRequest Redis CLIENT
// spans, with OTel semantic-convention attributes. About 1% of Redis spans
// fail and 1% are slow. Not safe for concurrent use.
type Spans struct {
	rng *rand.Rand
}

// NewSpans returns a generator seeded with seed.
func NewSpans(seed uint64) *Spans {
	return &Spans{rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

// Requests returns the spans of n requests that all ended at end (the sink
// measures latency from span end times).
func (g *Spans) Requests(n int, end time.Time) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	ra := rs.Resource().Attributes()
	ra.PutStr("service.name", "api")
	ra.PutStr("service.version", "1.42.0")
	ra.PutStr("deployment.environment.name", "production")
	ra.PutStr("telemetry.sdk.language", "nodejs")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("@opentelemetry/instrumentation-ioredis")
	spans := ss.Spans()
	spans.EnsureCapacity(n * SpansPerRequest)
	endTS := pcommon.NewTimestampFromTime(end)
	for range n {
		var tid pcommon.TraceID
		putRandom(g.rng, tid[:])
		var sid pcommon.SpanID
		putRandom(g.rng, sid[:])
		r := routes[g.rng.IntN(len(routes))]
		reqDur := time.Duration(2+g.rng.IntN(40)) * time.Millisecond
		start := end.Add(-reqDur)

		srv := spans.AppendEmpty()
		srv.SetTraceID(tid)
		srv.SetSpanID(sid)
		srv.SetName(r.method + " " + r.path)
		srv.SetKind(ptrace.SpanKindServer)
		srv.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		srv.SetEndTimestamp(endTS)
		a := srv.Attributes()
		a.PutStr("http.request.method", r.method)
		a.PutStr("url.path", r.path)
		a.PutStr("http.route", r.path)
		a.PutInt("http.response.status_code", 200)
		a.PutStr("user_agent.original", userAgents[g.rng.IntN(len(userAgents))])
		a.PutStr("server.address", "api.internal")

		for i := range RedisSpansPerRequest {
			cs := spans.AppendEmpty()
			cs.SetTraceID(tid)
			var csid pcommon.SpanID
			putRandom(g.rng, csid[:])
			cs.SetSpanID(csid)
			cs.SetParentSpanID(sid)
			cmd := redisCommands[i%len(redisCommands)]
			cs.SetName(cmd)
			cs.SetKind(ptrace.SpanKindClient)
			d := time.Duration(100+g.rng.IntN(900)) * time.Microsecond
			if g.rng.IntN(100) == 0 {
				d = 30 * time.Millisecond // slow command
			}
			// Every span ends at the send time so the sink measures latency
			// alike for all of them.
			cs.SetStartTimestamp(pcommon.NewTimestampFromTime(end.Add(-d)))
			cs.SetEndTimestamp(endTS)
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

func putRandom(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}
