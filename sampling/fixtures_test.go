package sampling

import (
	"context"
	"encoding/binary"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// The fixtures are spans recorded from the real OpenTelemetry JS
// instrumentations (testdata/record): these tests check the sampler against
// what current clients really send.

func fixture(t testing.TB, name string) ptrace.Traces {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalJSON(b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if req.Traces().SpanCount() == 0 {
		t.Fatalf("%s: no spans", name)
	}
	return req.Traces()
}

func eachSpan(td ptrace.Traces, fn func(res pcommon.Map, sp ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(rs.Resource().Attributes(), spans.At(k))
			}
		}
	}
}

// TestFixtureOperations checks the operation of every span the
// instrumentations wrote, by span name. A span name missing here fails the
// test: a re-recording that brings a new shape must say what it is.
func TestFixtureOperations(t *testing.T) {
	want := map[string]map[string]string{
		"ioredis": {
			"get": "GET", "set": "SET", "mget": "MGET", "hgetall": "HGETALL", "evalsha": "EVALSHA", "hset": "HSET", // in a pipeline "PIPELINE get"
			"multi": "MULTI", "incr": "INCR", "expire": "EXPIRE", "exec": "EXEC", // a transaction: db.operation.name "MULTI incr"
			"DEBUG": "DEBUG", "client": "CLIENT",
			"GET /product/:id": "GET", "GET /broken": "GET", "GET /slow": "GET",
		},
		"redis": {
			"redis-GET": "GET", "redis-SET": "SET", "redis-MGET": "MGET", "redis-HGETALL": "HGETALL", "redis-HSET": "HSET",
			"redis-INCR": "MULTI", "redis-EXPIRE": "MULTI", // in a transaction: db.operation.name "MULTI"
			"redis-FLUSHDB": "FLUSHDB", "redis-CLIENT": "CLIENT", "redis-connect": "REDIS-CONNECT",
			"GET /product/:id": "GET", "GET /broken": "GET", "GET /slow": "GET",
		},
		"pg": {
			"pg.query:SELECT postgres": "SELECT", "pg.query:INSERT postgres": "INSERT",
			"pg.query:CREATE postgres": "CREATE", "pg.query:DROP postgres": "DROP", "pg.connect": "PG.CONNECT",
			"GET /product/:id": "GET", "GET /broken": "GET",
		},
		"http": {"GET": "GET", "POST": "POST", "GET /checkout": "GET"},
		// Go: redisotel writes the old conventions (db.system, db.statement)
		// and one span per pipeline, named by its commands.
		"go-redis": {
			"get": "GET", "set": "SET", "mget": "MGET", "hgetall": "HGETALL", "hset": "HSET", "flushdb": "FLUSHDB",
			"hello": "HELLO", "client": "CLIENT", "redis.dial": "REDIS.DIAL",
			"redis.pipeline get":                    "GET",   // db.statement "get product:0\nget stock:0"
			"redis.pipeline multi incr expire exec": "MULTI", // a transaction
			"redis.pipeline client":                 "CLIENT",
			"GET /product/{id}":                     "GET", "GET /broken": "GET", "GET /slow": "GET",
		},
		"go-http": {
			"HTTP GET": "GET", "HTTP POST": "POST", // otelhttp's client spans, by http.request.method
			"GET": "GET", "GET /api/items/{id}": "GET", "POST /api/items/{id}": "POST", "GET /fail": "GET", "GET /checkout": "GET",
		},
		"go-sql": {
			"sql.conn.exec": "", "sql.conn.query": "SELECT", // "" : checked below, by statement
			"sql.conn.reset_session": "SQL.CONN.RESET_SESSION", "sql.rows": "SQL.ROWS",
			"GET /product/{id}": "GET", "GET /broken": "GET",
		},
	}
	table := newSummaryTable(1000, time.Time{})
	for name, ops := range want {
		eachSpan(fixture(t, name), func(_ pcommon.Map, sp ptrace.Span) {
			w, ok := ops[sp.Name()]
			if q, _ := sp.Attributes().Get("db.query.text"); w == "" && ok {
				w = strings.ToUpper(strings.Fields(q.Str())[0]) // CREATE, INSERT, SELECT, DROP
			}
			if !ok {
				t.Errorf("%s: span %q %v is not in the table", name, sp.Name(), sp.Attributes().AsRaw())
				return
			}
			if got := table.operation(spanOperation(sp.Name(), mapAttrs(sp.Attributes()))); got != w {
				t.Errorf("%s: span %q %v: operation %q, want %q", name, sp.Name(), sp.Attributes().AsRaw(), got, w)
			}
		})
	}
}

// readmeRule is the sampling config of the root README's Sampling section,
// as a user copies it.
func readmeRule(t *testing.T) *Config {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Sampling\n")
	_, block, ok := strings.Cut(section, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || !strings.Contains(block, "rules:") {
		t.Fatal("no rule in README's Sampling section")
	}
	conf, err := confmap.NewRetrievedFromYAML([]byte(block))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := conf.AsConf()
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = raw.Sub("processors::sampling"); err != nil {
		t.Fatal(err)
	}
	cfg := createDefaultConfig().(*Config)
	if err := raw.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Summaries.Interval = time.Hour // the test reads the table itself
	return cfg
}

// copies returns n copies of td with new trace and span ids from gen, as n
// runs of the recorded requests would be.
func copies(td ptrace.Traces, n int, gen *spanGen) ptrace.Traces {
	out := ptrace.NewTraces()
	for c := 0; c < n; c++ {
		traces := map[pcommon.TraceID]pcommon.TraceID{}
		spans := map[pcommon.SpanID]pcommon.SpanID{}
		spanID := func(id pcommon.SpanID) pcommon.SpanID {
			if id.IsEmpty() {
				return id
			}
			if _, ok := spans[id]; !ok {
				spans[id] = gen.spanID()
			}
			return spans[id]
		}
		cp := ptrace.NewTraces()
		td.CopyTo(cp)
		eachSpan(cp, func(_ pcommon.Map, sp ptrace.Span) {
			id, ok := traces[sp.TraceID()]
			if !ok {
				id = gen.traceID()
				traces[sp.TraceID()] = id
			}
			sp.SetTraceID(id)
			sp.SetSpanID(spanID(sp.SpanID()))
			sp.SetParentSpanID(spanID(sp.ParentSpanID()))
		})
		cp.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return out
}

// TestReadmeRuleSamplesRecordedRedisGets runs the README's rule, copied as
// it stands, over many runs of the recorded ioredis and node-redis requests,
// on the pdata path and on the raw protobuf path. Every span must be kept
// or dropped as the spec's arithmetic says (kept iff the trace's randomness
// R >= th fd70a for "1%", or an error, or at least keep_if's 25ms), kept
// GETs must carry the weight of th fd70a, and the summaries must count
// every GET and MGET exactly.
func TestReadmeRuleSamplesRecordedRedisGets(t *testing.T) {
	const runs = 200
	const th = uint64(0xfd70a) << 36 // "1%" as the README says it is written
	weight := float64(uint64(1)<<56) / float64(uint64(1)<<56-th)
	for _, client := range []string{"ioredis", "redis", "go-redis"} {
		t.Run(client, func(t *testing.T) {
			cfg := readmeRule(t)
			minDur := int64(cfg.Rules[0].KeepIf.MinDuration)
			td := copies(fixture(t, client), runs, newSpanGen(11))

			// What must be kept, from the spans alone.
			type want struct {
				keep, sampled bool // sampled: kept by the rule's probability
			}
			wants := map[pcommon.SpanID]want{}
			seen := map[string]int{}
			eligible := map[pcommon.TraceID]float64{} // GETs decided by R, per trace
			eachSpan(td, func(_ pcommon.Map, sp ptrace.Span) {
				op := strings.ToUpper(spanOperation(sp.Name(), mapAttrs(sp.Attributes())))
				if sp.Kind() != ptrace.SpanKindClient || (op != "GET" && op != "MGET") {
					wants[sp.SpanID()] = want{keep: true} // no rule: untouched
					return
				}
				status := "unset"
				if sp.Status().Code() == ptrace.StatusCodeError {
					status = "error"
				}
				seen[op+"|"+status]++
				tid := sp.TraceID()
				dur := int64(sp.EndTimestamp() - sp.StartTimestamp())
				exempt := status == "error" || dur >= minDur
				sampled := !exempt && binary.BigEndian.Uint64(tid[8:])&randomMask >= th
				if !exempt {
					eligible[tid]++
				}
				wants[sp.SpanID()] = want{keep: exempt || sampled, sampled: sampled}
			})
			if seen["GET|error"] == 0 {
				t.Fatal("the fixture has no failing GET")
			}

			pdataSampler, pdataSink, consume := startSampler(t, cfg)
			rawSampler, _, _ := startSampler(t, readmeRule(t))
			req, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := rawSampler.FilterTraces(context.Background(), nil, req)
			if err != nil {
				t.Fatal(err)
			}
			raw := ptraceotlp.NewExportRequest()
			if err := raw.UnmarshalProto(out); err != nil {
				t.Fatal(err)
			}
			if err := consume(context.Background(), td); err != nil {
				t.Fatal(err)
			}
			for path, got := range map[string]ptrace.Traces{"pdata": pdataSink.AllTraces()[0], "raw": raw.Traces()} {
				kept, sampled := 0, 0
				missing := maps.Clone(wants)
				eachSpan(got, func(_ pcommon.Map, sp ptrace.Span) {
					w, ok := wants[sp.SpanID()]
					if !ok || !w.keep {
						t.Errorf("%s: span %q kept, the rule drops it", path, sp.Name())
						return
					}
					delete(missing, sp.SpanID())
					kept++
					wAttr, hasWeight := sp.Attributes().Get(WeightAttribute)
					switch {
					case w.sampled:
						sampled++
						if !hasWeight || wAttr.Double() != weight || sp.TraceState().AsRaw() != "ot=th:fd70a" {
							t.Errorf("%s: sampled %q carries weight %v, tracestate %q", path, sp.Name(), wAttr.AsRaw(), sp.TraceState().AsRaw())
						}
					case hasWeight && wAttr.Double() != 1:
						t.Errorf("%s: %q kept by keep_if or always_keep has weight %v", path, sp.Name(), wAttr.Double())
					}
				})
				for _, w := range missing {
					if w.keep {
						t.Errorf("%s: a span the rule keeps is missing", path)
					}
				}
				t.Logf("%s path: kept %d spans, %d GETs by probability", path, kept, sampled)
				if sampled == 0 {
					t.Errorf("%s: no GET kept by probability over %d runs", path, runs)
				}
			}

			for name, s := range map[string]*sampler{"pdata": pdataSampler, "raw": rawSampler} {
				rows := summaryRows(s.summaries.toLogs(s.names, time.Now()))
				total, weightSum := 0, 0.0
				for key, n := range seen {
					op, status, _ := strings.Cut(key, "|")
					service, _ := td.ResourceSpans().At(0).Resource().Attributes().Get("service.name")
					row := rows[service.Str()+"|redis-get|"+op+"|"+status]
					if row == nil || row["seen"] != int64(n) || row["kept"].(int64)+row["dropped"].(int64) != int64(n) {
						t.Errorf("%s: summary of %s: %v, want seen %d", name, key, row, n)
						continue
					}
					total += n
					weightSum += row["weight_sum"].(float64)
				}
				if len(rows) != len(seen) {
					t.Errorf("%s: %d summary groups, want %d: %v", name, len(rows), len(seen), rows)
				}
				// weight_sum estimates seen: within 5 standard deviations. A
				// trace's GETs are kept or dropped together, so its k GETs
				// add k²(w-1) to the variance.
				variance := 0.0
				for _, k := range eligible {
					variance += k * k * (weight - 1)
				}
				if sd := math.Sqrt(variance); math.Abs(weightSum-float64(total)) > 5*sd {
					t.Errorf("%s: weight_sum %.0f for %d GETs (sd %.0f)", name, weightSum, total, sd)
				}
			}
		})
	}
}

// TestOldNamesMatchRecordedSpans writes rules with the old names and checks
// that they match the recorded spans, which carry only the stable ones.
func TestOldNamesMatchRecordedSpans(t *testing.T) {
	cases := []struct {
		fixture string
		attrs   map[string]any
		stable  func(sp ptrace.Span) bool // the same condition on the stable name
	}{
		{"pg", map[string]any{"db.system": "postgresql", "db.name": "postgres"}, func(sp ptrace.Span) bool {
			v, ok := sp.Attributes().Get("db.system.name")
			return ok && v.Str() == "postgresql"
		}},
		{"pg", map[string]any{"db.statement": map[string]any{"regex": "^SELECT .* WHERE"}}, func(sp ptrace.Span) bool {
			v, ok := sp.Attributes().Get("db.query.text")
			return ok && strings.HasPrefix(v.Str(), "SELECT ") && strings.Contains(v.Str(), " WHERE")
		}},
		{"http", map[string]any{"http.status_code": []any{404, 500}}, func(sp ptrace.Span) bool {
			v, ok := sp.Attributes().Get("http.response.status_code")
			return ok && (v.Int() == 404 || v.Int() == 500)
		}},
		{"http", map[string]any{"http.method": "POST", "http.url": map[string]any{"exists": true}}, func(sp ptrace.Span) bool {
			_, full := sp.Attributes().Get("url.full")
			return sp.Name() == "POST" && full
		}},
		// redisotel writes the old names: a rule with the stable ones matches.
		{"go-redis", map[string]any{"db.system.name": "redis", "db.query.text": map[string]any{"glob": "get *"}}, func(sp ptrace.Span) bool {
			v, ok := sp.Attributes().Get("db.statement")
			return ok && strings.HasPrefix(v.Str(), "get ")
		}},
		{"go-sql", map[string]any{"db.system": "postgresql"}, func(sp ptrace.Span) bool {
			_, ok := sp.Attributes().Get("db.system.name")
			return ok
		}},
		{"http", map[string]any{"http.target": map[string]any{"glob": "/health*"}}, func(sp ptrace.Span) bool {
			v, ok := sp.Attributes().Get("url.path")
			return ok && v.Str() == "/health"
		}},
	}
	for _, c := range cases {
		m := mustMatcher(t, MatchConfig{Attributes: c.attrs})
		matched, want := 0, 0
		eachSpan(fixture(t, c.fixture), func(res pcommon.Map, sp ptrace.Span) {
			v := pdataSpanView(sp, newSpanResource(mapAttrs(res)))
			got := m.matchSpan(&v)
			if got != c.stable(sp) {
				t.Errorf("%s %v: span %q %v: match %v", c.fixture, c.attrs, sp.Name(), sp.Attributes().AsRaw(), got)
			}
			if got {
				matched++
			}
			if c.stable(sp) {
				want++
			}
		})
		if want == 0 {
			t.Errorf("%s %v: no recorded span to match", c.fixture, c.attrs)
		}
		t.Logf("%s %v: %d spans", c.fixture, c.attrs, matched)
	}
}
